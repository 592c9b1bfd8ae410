package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/flagsnap/flagsnap/evaluator"
)

const validateUsage = `Usage: flagsnap validate [--strict] [--format text|json] FILE...

Parses each flag file (JSON or YAML) exactly as the flagsnap provider does
and reports every problem with its file, line and column, the flag it
concerns, its JSON path and why, and a fix when there is an obvious one: a
flag with a problem answers PARSE_ERROR while the others load. Violations
of flagd's published JSON schema, which flagd only logs, are warnings.

Exit status: 0 valid, 1 invalid (or warnings with --strict), 2 unreadable.

Example:
  flagsnap validate flags.json
  flags.json:12:7: error: flag "new-checkout": /flags/new-checkout/defaultVariant: defaultVariant "of" is not one of the variants
      fix: use one of the variants: "off", "on"
  flags.json: invalid: 1 error, 0 warnings
`

// problem is one thing wrong with a flag file.
type problem struct {
	Severity string `json:"severity"` // "error" or "warning"
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Flag     string `json:"flag,omitempty"`
	// Path is where the problem is, as a JSON Pointer
	// ("/flags/new-checkout/defaultVariant"); empty for the document as a
	// whole.
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
	// Fix says how to mend the problem, when there is an obvious way.
	Fix string `json:"fix,omitempty"`
	// Source is "flagsnap" for what the provider finds, "schema" for
	// violations of flagd's schema, "read" for a file that cannot be read.
	Source string `json:"source"`
}

// fileReport is what validate found in one file.
type fileReport struct {
	File     string    `json:"file"`
	Valid    bool      `json:"valid"`
	Readable bool      `json:"readable"`
	Flags    int       `json:"flags"`
	Errors   int       `json:"errors"`
	Warnings int       `json:"warnings"`
	Problems []problem `json:"problems"`
}

func (c *cmd) validate(args []string) int {
	fs := c.newFlagSet(validateUsage)
	strict := fs.Bool("strict", false, "treat warnings (schema violations, ignored metadata) as errors")
	format := fs.String("format", "text", "output format: text or json")
	files, status, ok := c.parseOrFail(fs, args)
	if !ok {
		return status
	}
	if err := checkOneOf("format", *format, "text", "json"); err != nil {
		return c.fail(exitBadInput, "%v", err)
	}
	if len(files) == 0 {
		return c.fail(exitBadInput, "no file given (see flagsnap validate --help)")
	}
	reports := make([]fileReport, len(files))
	status = exitOK
	for i, f := range files {
		reports[i] = validateFile(f, *strict)
		switch {
		case !reports[i].Readable:
			status = exitBadInput
		case !reports[i].Valid && status == exitOK:
			status = exitNegative
		}
	}
	for _, r := range reports {
		if !r.Readable {
			// Input that cannot be used is a line on stderr in every
			// format; the JSON report has it too.
			c.fail(exitBadInput, "%s: %s", r.File, r.Problems[0].Message)
		}
	}
	if *format == "json" {
		writeJSON(c.stdout, struct {
			Valid bool         `json:"valid"`
			Files []fileReport `json:"files"`
		}{status == exitOK, reports})
		return status
	}
	for _, r := range reports {
		if r.Readable {
			printReport(c.stdout, r)
		}
	}
	return status
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func printReport(w io.Writer, r fileReport) {
	for _, p := range r.Problems {
		loc := r.File
		if p.Line > 0 {
			loc += fmt.Sprintf(":%d", p.Line)
		}
		if p.Column > 0 {
			loc += fmt.Sprintf(":%d", p.Column)
		}
		about := ""
		if p.Flag != "" {
			about = fmt.Sprintf("flag %q: ", p.Flag)
		}
		if p.Source == "schema" {
			about += "schema: "
		}
		if p.Path != "" {
			about += p.Path + ": "
		}
		fmt.Fprintf(w, "%s: %s: %s%s\n", loc, p.Severity, about, p.Message)
		if p.Fix != "" {
			// On a line of its own, so that the problem's line stays what
			// editors and CI annotations read.
			fmt.Fprintf(w, "    fix: %s\n", p.Fix)
		}
	}
	switch {
	case r.Valid:
		fmt.Fprintf(w, "%s: valid: %s, %s\n", r.File, plural(r.Flags, "flag"), plural(r.Warnings, "warning"))
	default:
		fmt.Fprintf(w, "%s: invalid: %s, %s\n", r.File, plural(r.Errors, "error"), plural(r.Warnings, "warning"))
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// validateFile reads and checks one file.
func validateFile(path string, strict bool) fileReport {
	r := fileReport{File: path}
	data, err := readInput(path)
	if err != nil {
		r.Problems = []problem{{Severity: "error", Message: readError(err), Source: "read"}}
		r.Errors = 1
		return r
	}
	r.Readable = true
	r.Problems, r.Flags = checkDocument(data)
	for i := range r.Problems {
		p := &r.Problems[i]
		if strict {
			p.Severity = "error"
		}
		if p.Severity == "error" {
			r.Errors++
		} else {
			r.Warnings++
		}
	}
	r.Valid = r.Errors == 0
	return r
}

// readError is the reason a file cannot be read, without the path that
// the report already shows.
func readError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// checkDocument is every problem of a flag document, in file order: the
// provider's own verdict (errors), what its loader warns about and the
// schema's violations (warnings). It also counts the flags.
//
// The loader reads the document first: what it refuses to parse, nothing
// else reads. Its decoders bound the nesting (maxDepth) and the expansion
// of YAML aliases, and the maps and checks below, which grow with the
// document, would otherwise meet documents made to have no end.
func checkDocument(data []byte) ([]problem, int) {
	var logged loadLog
	set, err := evaluator.Load(data, evaluator.WithLogger(slog.New(&logged)))
	var se *evaluator.SyntaxError
	if errors.As(err, &se) {
		return []problem{syntaxProblem(data, se)}, 0
	}
	src := newSourceMap(data)
	doc, docErr := schemaInstance(data)
	if err != nil {
		p := problem{Severity: "error", Message: err.Error(), Source: "flagsnap"}
		var de *evaluator.DocumentError
		if errors.As(err, &de) {
			p.Path = de.Pointer()
		}
		p.Line, p.Column = lineColumn(src.find(p.Path))
		return append([]problem{p}, schemaProblems(doc, docErr, src, nil)...), 0
	}
	var out []problem
	fx := newFixer(doc)
	for _, fp := range set.Problems() {
		out = append(out, flagProblem(src, fx, fp))
	}
	for _, w := range logged.records {
		p := problem{Severity: "warning", Flag: w.flag, Path: w.pointer, Message: w.msg, Source: "flagsnap",
			Fix: fx.fix(splitPointer(w.pointer))}
		p.Line, p.Column = lineColumn(src.find(w.pointer))
		out = append(out, p)
	}
	out = append(out, schemaProblems(doc, docErr, src, out)...)
	// In file order, as a reader goes through the file; the flag's own
	// problem before the schema's at the same place.
	slices.SortStableFunc(out, func(a, b problem) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return out, set.Len()
}

// syntaxProblem reports a document that does not parse, with a fix when the
// cause is one of the loader's limits rather than a typo.
func syntaxProblem(data []byte, se *evaluator.SyntaxError) problem {
	p := problem{Severity: "error", Line: se.Line, Column: se.Column, Message: se.Error(), Source: "flagsnap"}
	switch se.Format {
	case "JSON":
		if nestsDeeper(data, maxDepth) {
			p.Fix = fmt.Sprintf("nest values at most %d levels deep: neither flagsnap nor flagd reads deeper", maxDepth)
		}
	case "YAML":
		if written, expanded, ok := aliasExpansion(data); ok && expanded > aliasFactor*written {
			p.Fix = fmt.Sprintf("use fewer aliases: expanded, they turn the %d values written into %s, and the YAML decoder refuses a document made mostly of expanded aliases", written, formatCount(expanded))
		}
	}
	return p
}

// flagProblem reports a flag's problem where the evaluator says it is
// written: its path, not its message, which is free to change. The
// message leaves out the place in the rule a compile error starts with:
// the path says it.
func flagProblem(src *sourceMap, fx *fixer, fp evaluator.FlagProblem) problem {
	msg := fp.Err.Error()
	if ce, ok := fp.Err.(*evaluator.CompileError); ok {
		msg = ce.Msg
	}
	p := problem{Severity: "error", Flag: fp.Flag, Path: fp.Pointer(), Message: msg, Source: "flagsnap", Fix: fx.fix(fp.Path)}
	p.Line, p.Column = lineColumn(src.find(p.Path))
	return p
}

// allTheSameNote is what a schema warning adds when flagd evaluates the
// part it is about all the same, so that nobody "fixes" a flag that works.
const allTheSameNote = " (flagd evaluates this all the same)"

// schemaProblems are the schema's violations, as warnings. found are the
// problems found so far, for evaluatedAllTheSame.
func schemaProblems(doc any, docErr error, src *sourceMap, found []problem) []problem {
	if docErr != nil {
		return []problem{{Severity: "warning", Message: "cannot check against flagd's schema: " + docErr.Error(), Source: "schema"}}
	}
	violations, skipped, err := checkSchema(doc)
	if err != nil {
		return []problem{{Severity: "warning", Message: "cannot check against flagd's schema: " + err.Error(), Source: "schema"}}
	}
	// The errors of each flag's rule, for evaluatedAllTheSame: looked up
	// by flag, not searched, however many problems the file has.
	ruleErrors := map[string][]string{}
	for _, p := range found {
		if p.Severity == "error" && p.Source == "flagsnap" {
			if rule := ruleOf(p.Path); rule != "" {
				ruleErrors[rule] = append(ruleErrors[rule], p.Path)
			}
		}
	}
	out := make([]problem, 0, len(violations)+len(skipped))
	for _, ptr := range skipped {
		p := problem{Severity: "warning", Flag: src.flagOf(ptr), Path: ptr, Source: "schema",
			Message: fmt.Sprintf("not checked: the rule nests more than %d levels deep, further than this check follows", maxSchemaDepth)}
		p.Line, p.Column = lineColumn(src.find(ptr))
		out = append(out, p)
	}
	for _, v := range violations {
		p := problem{Severity: "warning", Flag: src.flagOf(v.pointer), Path: v.pointer, Source: "schema", Message: v.msg}
		if evaluatedAllTheSame(v, doc, ruleErrors[ruleOf(v.pointer)]) {
			p.Message += allTheSameNote
		}
		p.Line, p.Column = lineColumn(src.find(v.pointer))
		out = append(out, p)
	}
	return out
}

// evaluatedAllTheSame tells a schema violation that only says a value is
// computed by an operation where flagd's schema wants it written out, such
// as a weight of fractional: flagd evaluates the operation and uses its
// value, as the provider does. It holds when the provider compiled that
// part of the flag's rule, having no error (errs, the rule's) at the same
// place, within it or around it.
func evaluatedAllTheSame(v schemaViolation, doc any, errs []string) bool {
	if !v.gotObject || ruleOf(v.pointer) == "" {
		return false
	}
	op, _ := lookup(doc, splitPointer(v.pointer)).(map[string]any)
	if len(op) != 1 {
		return false
	}
	for name := range op {
		if !slices.Contains(operatorNames, name) {
			return false
		}
	}
	for _, e := range errs {
		inside := e == v.pointer || strings.HasPrefix(e, v.pointer+"/")
		around := strings.HasPrefix(v.pointer, e+"/") && e != ruleOf(v.pointer)
		if inside || around {
			return false
		}
	}
	return true
}

// ruleOf is the pointer of the flag's rule ("/flags/f/targeting") that ptr
// is within, "" if it is within none.
func ruleOf(ptr string) string {
	tok := splitPointer(ptr)
	if len(tok) < 4 || tok[0] != "flags" || tok[2] != "targeting" {
		return ""
	}
	return "/flags/" + escapePointer(tok[1]) + "/targeting"
}

func lineColumn(p pos) (int, int) { return p.line, p.column }

// loadLog keeps the warnings the evaluator logs while loading: ignored
// metadata, a state that is neither ENABLED nor DISABLED, deprecated
// operators. Its errors repeat the flag problems and are left out.
type loadLog struct {
	records []loadRecord
}

// loadRecord is one warning; pointer is where the evaluator says its
// subject is written.
type loadRecord struct{ flag, msg, pointer string }

func (l *loadLog) Enabled(_ context.Context, level slog.Level) bool {
	return level >= slog.LevelWarn && level < slog.LevelError
}

func (l *loadLog) Handle(_ context.Context, r slog.Record) error {
	rec := loadRecord{msg: r.Message}
	problem := false
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "flag":
			rec.flag = a.Value.String()
		case "pointer":
			rec.pointer = a.Value.String()
		case "problem":
			// A warning about a flag problem, which is reported as one.
			problem = true
		}
		return true
	})
	if !problem {
		l.records = append(l.records, rec)
	}
	return nil
}

func (l *loadLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *loadLog) WithGroup(string) slog.Handler      { return l }
