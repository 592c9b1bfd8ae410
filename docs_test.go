package flagsnap_test

// The repository's Markdown is checked like code: every Go block a reader
// might copy compiles against the packages as they are, and every relative
// link and anchor leads somewhere.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// noCompile, on the line before a ```go fence, marks a block that is not
// meant to compile (a sketch, a fragment of a signature).
const noCompile = "<!-- no-compile -->"

// markdownFiles lists the repository's Markdown files, relative to its
// root, skipping what the go command skips too (testdata, names starting
// with "." or "_") and the npm packages installed for browser tests.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".md") {
			files = append(files, filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "README.md") {
		t.Fatalf("no README.md among %v: the test must run from the repository's root", files)
	}
	return files
}

// mdLine is one line of a Markdown file, with whether it is inside a
// fenced code block (fences included) and, for a fence that opens one, the
// fence's info string.
type mdLine struct {
	num     int // 1-based
	text    string
	inFence bool
	opens   bool   // the line opens a code block
	closes  bool   // the line closes a code block
	info    string // the info string of an opening fence
}

// readLines splits a Markdown file into lines, marking those of fenced
// code blocks.
func readLines(data []byte) []mdLine {
	var out []mdLine
	open := "" // the marker of the fence that is open
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		l := mdLine{num: n, text: sc.Text()}
		marker, info, isFence := fence(l.text)
		switch {
		case open == "" && isFence:
			open, l.inFence, l.opens, l.info = marker, true, true, info
		case open != "" && isFence && info == "" && strings.HasPrefix(marker, open[:1]) && len(marker) >= len(open):
			open, l.inFence, l.closes = "", true, true
		default:
			l.inFence = open != ""
		}
		out = append(out, l)
	}
	return out
}

// fence reports whether line opens or closes a code fence, and the
// fence's marker and info string.
func fence(line string) (marker, info string, ok bool) {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 {
		return "", "", false
	}
	for _, c := range []string{"```", "~~~"} {
		if strings.HasPrefix(trimmed, c) {
			n := len(trimmed) - len(strings.TrimLeft(trimmed, c[:1]))
			return trimmed[:n], strings.TrimSpace(trimmed[n:]), true
		}
	}
	return "", "", false
}

// snippet is a ```go block of a Markdown file.
type snippet struct {
	file string // relative to the repository's root
	line int    // the line of the block's first line of code
	code string
}

// goSnippets returns the ```go blocks of a Markdown file, but those marked
// with noCompile.
func goSnippets(file string, data []byte) []snippet {
	var out []snippet
	var cur *snippet
	var body []string
	prev := "" // the last non-blank line outside a block
	for _, l := range readLines(data) {
		switch {
		case l.opens:
			lang, _, _ := strings.Cut(l.info, " ")
			if lang == "go" && strings.TrimSpace(prev) != noCompile {
				cur, body = &snippet{file: file, line: l.num + 1}, nil
			}
		case l.closes:
			if cur != nil {
				cur.code = strings.Join(body, "\n") + "\n"
				out = append(out, *cur)
				cur = nil
			}
			prev = ""
		case l.inFence:
			body = append(body, l.text)
		case strings.TrimSpace(l.text) != "":
			prev = l.text
		}
	}
	return out
}

// importPaths are the packages a fragment may use without importing them,
// by the name it uses.
var importPaths = map[string]string{
	"flagsnap":     "github.com/flagsnap/flagsnap",
	"evaluator":    "github.com/flagsnap/flagsnap/evaluator",
	"flagsnaptest": "github.com/flagsnap/flagsnap/flagsnaptest",
	"fractional":   "github.com/flagsnap/flagsnap/fractional",
	"source":       "github.com/flagsnap/flagsnap/source",
	"syncserver":   "github.com/flagsnap/flagsnap/syncserver",
	"openfeature":  "github.com/open-feature/go-sdk/openfeature",
	"grpc":         "google.golang.org/grpc",
	"codes":        "google.golang.org/grpc/codes",
	"keepalive":    "google.golang.org/grpc/keepalive",
	"context":      "context",
	"errors":       "errors",
	"fmt":          "fmt",
	"http":         "net/http",
	"io":           "io",
	"json":         "encoding/json",
	"log":          "log",
	"os":           "os",
	"slog":         "log/slog",
	"sql":          "database/sql",
	"strings":      "strings",
	"sync":         "sync",
	"testing":      "testing",
	"time":         "time",
}

// freeNames are the variables a fragment may use without declaring them,
// as the text around it has them: a provider, a client, a context...
var freeNames = map[string]string{
	"provider": "*flagsnap.Provider",
	"client":   "*openfeature.Client",
	"ctx":      "context.Context",
	"t":        "*testing.T",
	"doc":      "[]byte",
	"newDoc":   "[]byte",
	"user":     "openfeature.EvaluationContext",
	"mux":      "*http.ServeMux",
}

// names gathers what a fragment declares and what it uses.
type names struct {
	declared map[string]bool
	used     map[string]bool // identifiers that may be free variables
	pkgs     map[string]bool // X of X.Sel, which may name a package
}

func collectNames(node ast.Node) names {
	n := names{declared: map[string]bool{}, used: map[string]bool{}, pkgs: map[string]bool{}}
	declare := func(ids ...*ast.Ident) {
		for _, id := range ids {
			if id != nil {
				n.declared[id.Name] = true
			}
		}
	}
	declareFields := func(fl *ast.FieldList) {
		if fl != nil {
			for _, f := range fl.List {
				declare(f.Names...)
			}
		}
	}
	skip := map[*ast.Ident]bool{} // selectors and struct literal keys
	ast.Inspect(node, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.SelectorExpr:
			skip[x.Sel] = true
			if id, ok := x.X.(*ast.Ident); ok {
				n.pkgs[id.Name] = true
			}
		case *ast.KeyValueExpr:
			if id, ok := x.Key.(*ast.Ident); ok {
				skip[id] = true
			}
		case *ast.AssignStmt:
			if x.Tok == token.DEFINE {
				for _, e := range x.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						declare(id)
					}
				}
			}
		case *ast.RangeStmt:
			if x.Tok == token.DEFINE {
				for _, e := range []ast.Expr{x.Key, x.Value} {
					if id, ok := e.(*ast.Ident); ok {
						declare(id)
					}
				}
			}
		case *ast.ValueSpec:
			declare(x.Names...)
		case *ast.TypeSpec:
			declare(x.Name)
		case *ast.FuncDecl:
			declare(x.Name)
			declareFields(x.Recv)
		case *ast.FuncType:
			declareFields(x.Params)
			declareFields(x.Results)
		case *ast.Field:
			// Struct field names are not variables; their types are
			// walked as usual.
			for _, id := range x.Names {
				skip[id] = true
			}
		case *ast.Ident:
			if !skip[x] {
				n.used[x.Name] = true
			}
		}
		return true
	})
	return n
}

// generated is a snippet made into a file of a package of its own.
type generated struct {
	snippet
	pkg  string // the package's directory name
	name string // the file's name
	src  string
}

// generate turns a snippet into a Go file: a whole program as it is; top
// level declarations with the imports they use; statements wrapped in a
// function whose parameters are the free variables they use, each
// variable they declare used once at the end.
func generate(s snippet, pkg string) (generated, error) {
	g := generated{snippet: s, pkg: pkg, name: "snippet.go"}
	lineDirective := fmt.Sprintf("//line %s:%d\n", s.file, s.line)
	fset := token.NewFileSet()

	if regexp.MustCompile(`(?m)^package `).MatchString(s.code) {
		g.name = "main.go"
		g.src = lineDirective + s.code
		return g, nil
	}

	var imports, free []string
	header := func(n names) string {
		for name, path := range importPaths {
			if n.pkgs[name] && !n.declared[name] {
				imports = append(imports, fmt.Sprintf("%s %q", name, path))
			}
		}
		for name, typ := range freeNames {
			if n.used[name] && !n.declared[name] {
				free = append(free, name+" "+typ)
				pkgName, _, _ := strings.Cut(strings.TrimLeft(typ, "*[]"), ".")
				if path, ok := importPaths[pkgName]; ok && !n.pkgs[pkgName] {
					imports = append(imports, fmt.Sprintf("%s %q", pkgName, path))
				}
			}
		}
		sort.Strings(imports)
		imports = slices.Compact(imports)
		sort.Strings(free)
		return fmt.Sprintf("package %s\n\nimport (\n\t%s\n)\n\n", pkg, strings.Join(imports, "\n\t"))
	}

	// Declarations: the snippet is a file but for its package clause.
	if f, err := parser.ParseFile(fset, s.file, "package p\n"+s.code, 0); err == nil && len(f.Decls) > 0 {
		n := collectNames(f)
		src := header(n)
		var vars strings.Builder
		for _, v := range free {
			fmt.Fprintf(&vars, "var %s\n", v)
		}
		g.src = src + vars.String() + lineDirective + s.code
		return g, nil
	}

	// Statements: the body of a function.
	wrapped := "package p\nfunc _() {\n" + s.code + "\n}\n"
	f, err := parser.ParseFile(fset, s.file, wrapped, 0)
	if err != nil {
		return g, fmt.Errorf("%s:%d: neither declarations nor statements: %v", s.file, s.line, err)
	}
	body := f.Decls[0].(*ast.FuncDecl).Body
	n := collectNames(body)
	src := header(n)
	var tail strings.Builder
	seen := map[string]bool{}
	for _, st := range body.List {
		var ids []*ast.Ident
		switch st := st.(type) {
		case *ast.AssignStmt:
			if st.Tok == token.DEFINE {
				for _, e := range st.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						ids = append(ids, id)
					}
				}
			}
		case *ast.DeclStmt:
			if gd, ok := st.Decl.(*ast.GenDecl); ok && gd.Tok == token.VAR {
				for _, sp := range gd.Specs {
					ids = append(ids, sp.(*ast.ValueSpec).Names...)
				}
			}
		}
		for _, id := range ids {
			if id.Name != "_" && !seen[id.Name] {
				seen[id.Name] = true
				fmt.Fprintf(&tail, "\t_ = %s\n", id.Name)
			}
		}
	}
	g.src = fmt.Sprintf("%sfunc _(%s) {\n%s%s\n%s}\n", src, strings.Join(free, ", "), lineDirective, s.code, tail.String())
	return g, nil
}

// repoRoot is the repository's root, where the tests of the root package
// run.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod in %s: %v", dir, err)
	}
	return dir
}

// TestDocSnippetsCompile builds every ```go block of the repository's
// Markdown files, each as a package of its own inside this module, with
// one go build. The packages exist only in an overlay (go build -overlay),
// so nothing is written into the repository and the module's go.mod and
// go.sum serve as they are, from the module cache. Compiler errors name
// the Markdown file and line.
func TestDocSnippetsCompile(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	root := repoRoot(t)
	var snippets []snippet
	for _, file := range markdownFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		snippets = append(snippets, goSnippets(file, data)...)
	}
	readme := 0
	for _, s := range snippets {
		if s.file == "README.md" {
			readme++
		}
	}
	if readme == 0 {
		t.Fatal("README.md has no ```go block: are the fences read right?")
	}

	tmp := t.TempDir()
	const virtualDir = "internal/docsnippets" // exists only in the overlay
	if _, err := os.Stat(filepath.Join(root, virtualDir)); err == nil {
		t.Fatalf("%s exists; the overlay needs the name", virtualDir)
	}
	replace := map[string]string{}
	var pkgs []string
	for i, s := range snippets {
		g, err := generate(s, fmt.Sprintf("s%03d", i))
		if err != nil {
			t.Error(err)
			continue
		}
		real := filepath.Join(tmp, g.pkg+".go")
		if err := os.WriteFile(real, []byte(g.src), 0o644); err != nil {
			t.Fatal(err)
		}
		replace[filepath.Join(root, virtualDir, g.pkg, g.name)] = real
		pkgs = append(pkgs, "./"+virtualDir+"/"+g.pkg)
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(goCmd, append([]string{"build", "-overlay", overlayFile}, pkgs...)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("the Go blocks of the Markdown files do not all compile (%v); mark a block that is not meant to with %s on the line before its fence:\n%s", err, noCompile, out)
	}
}

// TestGenerateSnippet pins how fragments are completed: their imports,
// their free variables, the variables they leave unused.
func TestGenerateSnippet(t *testing.T) {
	g, err := generate(snippet{file: "README.md", line: 7, code: "st := provider.SourceStatus()\nfmt.Println(st.State)\n"}, "s001")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`fmt "fmt"`, `flagsnap "github.com/flagsnap/flagsnap"`, "func _(provider *flagsnap.Provider) {", "//line README.md:7", "_ = st"} {
		if !strings.Contains(g.src, want) {
			t.Errorf("generated source lacks %q:\n%s", want, g.src)
		}
	}
}

var (
	// inlineLink is the target of [text](target "title") and ![alt](target).
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	// refLink is a reference definition: [name]: target
	refLink = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	// codeSpan is inline code, where brackets are not links.
	codeSpan = regexp.MustCompile("(`+)[^`]*?(`+)")
	// htmlAnchor is an anchor written in HTML.
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	// headingLink is a link inside a heading, which slugs by its text.
	headingLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag     = regexp.MustCompile(`<[^>]*>`)
)

// slug is the anchor GitHub gives a heading: its text in lower case, with
// punctuation but hyphens and underscores removed and each space a hyphen.
func slug(heading string) string {
	h := headingLink.ReplaceAllString(heading, "$1")
	h = htmlTag.ReplaceAllString(h, "")
	h = strings.ToLower(strings.TrimSpace(h))
	var b strings.Builder
	for _, r := range h {
		switch {
		case unicode.IsLetter(r), unicode.IsNumber(r), unicode.Is(unicode.M, r), unicode.Is(unicode.Pc, r), r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// anchors returns the anchors of a Markdown file: its headings' slugs,
// numbered as GitHub numbers repeated ones, and anchors written in HTML.
func anchors(data []byte) map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	for _, l := range readLines(data) {
		if l.inFence {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(l.text, -1) {
			out[m[1]] = true
		}
		trimmed := strings.TrimLeft(l.text, " ")
		if len(l.text)-len(trimmed) > 3 || !strings.HasPrefix(trimmed, "#") {
			continue
		}
		level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
		rest := trimmed[level:]
		if level > 6 || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		text := strings.TrimSpace(rest)
		if closing := strings.TrimRight(text, "#"); closing != text && (closing == "" || strings.HasSuffix(closing, " ")) {
			text = strings.TrimSpace(closing)
		}
		s := slug(text)
		if c := count[s]; c > 0 {
			out[fmt.Sprintf("%s-%d", s, c)] = true
		} else {
			out[s] = true
		}
		count[s]++
	}
	return out
}

// link is a link found in a Markdown file.
type link struct {
	line   int
	target string
}

// links returns the links of a Markdown file outside code.
func links(data []byte) []link {
	var out []link
	for _, l := range readLines(data) {
		if l.inFence {
			continue
		}
		text := codeSpan.ReplaceAllString(l.text, "")
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			out = append(out, link{l.num, m[1]})
		}
		if m := refLink.FindStringSubmatch(text); m != nil {
			out = append(out, link{l.num, m[1]})
		}
	}
	return out
}

// TestDocLinks follows every relative link of every Markdown file of the
// repository: the file or directory it names must exist inside the
// repository, and an anchor must be a heading (or an HTML anchor) of the
// Markdown file it points into.
func TestDocLinks(t *testing.T) {
	root := repoRoot(t)
	files := markdownFiles(t)
	cache := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := cache[path]; ok {
			return a, nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		cache[path] = anchors(data)
		return cache[path], nil
	}
	checked := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links(data) {
			target := l.target
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			where := fmt.Sprintf("%s:%d: link %q", file, l.line, target)
			path, frag, _ := strings.Cut(target, "#")
			path, err := url.PathUnescape(path)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			resolved := file
			switch {
			case path == "":
			case strings.HasPrefix(path, "/"):
				resolved = filepath.FromSlash(strings.TrimPrefix(path, "/"))
			default:
				resolved = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
			}
			abs, err := filepath.Abs(resolved)
			if err != nil {
				t.Fatal(err)
			}
			if rel, err := filepath.Rel(root, abs); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				t.Errorf("%s: leads out of the repository", where)
				continue
			}
			if _, err := os.Stat(resolved); err != nil {
				t.Errorf("%s: %s does not exist", where, filepath.ToSlash(resolved))
				continue
			}
			if frag == "" || !strings.HasSuffix(resolved, ".md") {
				continue
			}
			a, err := anchorsOf(resolved)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			if !a[frag] {
				t.Errorf("%s: %s has no heading with the anchor #%s", where, filepath.ToSlash(resolved), frag)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found in the Markdown files: is the link pattern right?")
	}
}

// TestSlug pins the anchors GitHub gives headings of the kinds the docs
// use.
func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Quick start":                       "quick-start",
		"FAQ / troubleshooting":             "faq--troubleshooting",
		"`flagsnap validate`":               "flagsnap-validate",
		"What v3 hashes":                    "what-v3-hashes",
		"Options, variables and defaults":   "options-variables-and-defaults",
		"Large flag sets (max_size)":        "large-flag-sets-max_size",
		"[Link](x.md) text":                 "link-text",
		"Why does my handler never fire?":   "why-does-my-handler-never-fire",
		"Fractional v1 — legacy":            "fractional-v1--legacy",
		"The `FLAGD_*` variables":           "the-flagd_-variables",
		"Deliberate differences from flagd": "deliberate-differences-from-flagd",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
	a := anchors([]byte("# A\n\n```\n# not a heading\n```\n\n## A\n<a id=\"here\"></a>\n"))
	for _, want := range []string{"a", "a-1", "here"} {
		if !a[want] {
			t.Errorf("anchors lack %q: %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a line in a code block counted as a heading")
	}
}

// TestGoSnippets pins which blocks are taken: ```go ones, but those marked
// not to compile, and nothing inside another block.
func TestGoSnippets(t *testing.T) {
	md := "# T\n\n```go\nx := 1\n```\n\n" + noCompile + "\n```go\nnot Go\n```\n\n````text\n```go\ninside\n```\n````\n\n~~~go\ny := 2\n~~~\n"
	got := goSnippets("t.md", []byte(md))
	if len(got) != 2 || got[0].code != "x := 1\n" || got[0].line != 4 || got[1].code != "y := 2\n" {
		t.Errorf("goSnippets = %+v, want the blocks x := 1 (line 4) and y := 2", got)
	}
}
