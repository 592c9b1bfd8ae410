package blob_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// docsFile is the documentation of the sources, whose Go blocks that
// import this module the repository's own test of its Markdown cannot
// build: that test builds in the root module, which does not require
// this one.
const docsFile = "../docs/sources.md"

// docBlock is a ```go block of a Markdown file.
type docBlock struct {
	line int // of its first line of code
	code string
}

// blobBlocks returns the ```go blocks of data that import this module.
func blobBlocks(data []byte) []docBlock {
	var out []docBlock
	var cur *docBlock
	var body []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur, body = &docBlock{line: n + 1}, nil
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.code = strings.Join(body, "\n") + "\n"
			if strings.Contains(cur.code, `"github.com/flagsnap/flagsnap/blob"`) {
				out = append(out, *cur)
			}
			cur = nil
		case cur != nil:
			body = append(body, line)
		}
	}
	return out
}

// TestDocBlocksCompile builds each such block, a whole program, as a
// package of this module that exists only in an overlay (go build
// -overlay): nothing is written into the module. Compiler errors name the
// Markdown file and line.
func TestDocBlocksCompile(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	data, err := os.ReadFile(docsFile)
	if err != nil {
		t.Fatal(err)
	}
	blocks := blobBlocks(data)
	if len(blocks) == 0 {
		t.Fatalf("%s has no Go block that imports the blob module", docsFile)
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	const virtualDir = "internal/docblocks"
	if _, err := os.Stat(filepath.Join(dir, virtualDir)); err == nil {
		t.Fatalf("%s exists; the overlay needs the name", virtualDir)
	}
	tmp := t.TempDir()
	replace := map[string]string{}
	var pkgs []string
	for i, b := range blocks {
		pkg := fmt.Sprintf("b%02d", i)
		// A program's package main becomes a package of its own, which
		// builds without linking; its func main is then a function
		// like any other.
		code, ok := strings.CutPrefix(b.code, "package main\n")
		if !ok {
			t.Errorf("%s:%d: the block does not start with package main", docsFile, b.line)
			continue
		}
		src := fmt.Sprintf("package %s\n//line docs/sources.md:%d\n%s", pkg, b.line+1, code)
		real := filepath.Join(tmp, pkg+".go")
		if err := os.WriteFile(real, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		replace[filepath.Join(dir, virtualDir, pkg, "block.go")] = real
		pkgs = append(pkgs, "./"+virtualDir+"/"+pkg)
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
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the Go blocks of %s that use this module do not compile (%v):\n%s", docsFile, err, out)
	}
}
