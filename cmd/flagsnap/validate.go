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
concerns and why: a flag with a problem answers PARSE_ERROR while the
others load. Violations of flagd's published JSON schema, which flagd only
logs, are warnings.

Exit status: 0 valid, 1 invalid (or warnings with --strict), 2 unreadable.

Example:
  flagsnap validate flags.json
  flags.json:12:7: error: flag "new-checkout": defaultVariant "of" is not one of the variants
  flags.json: invalid: 1 error, 0 warnings
`

// problem is one thing wrong with a flag file.
type problem struct {
	Severity string `json:"severity"` // "error" or "warning"
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Flag     string `json:"flag,omitempty"`
	Message  string `json:"message"`
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
	fs := c.flags(validateUsage)
	strict := fs.Bool("strict", false, "treat warnings (schema violations, ignored metadata) as errors")
	format := fs.String("format", "text", "output format: text or json")
	files, status, ok := c.parseOrFail(fs, args)
	if !ok {
		return status
	}
	if err := oneOf("format", *format, "text", "json"); err != nil {
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
		flag := ""
		if p.Flag != "" {
			flag = fmt.Sprintf("flag %q: ", p.Flag)
		}
		if p.Source == "schema" {
			flag += "schema: "
		}
		fmt.Fprintf(w, "%s: %s: %s%s\n", loc, p.Severity, flag, p.Message)
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
	data, err := os.ReadFile(path)
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
func checkDocument(data []byte) ([]problem, int) {
	src := newSourceMap(data)
	var logged loadLog
	set, err := evaluator.Load(data, evaluator.WithLogger(slog.New(&logged)))
	if err != nil {
		p := problem{Severity: "error", Message: err.Error(), Source: "flagsnap"}
		var se *evaluator.SyntaxError
		if errors.As(err, &se) {
			// A document that does not parse has nothing else to check.
			p.Line, p.Column = se.Line, se.Column
			return []problem{p}, 0
		}
		ptr := "" // the document as a whole
		var de *evaluator.DocumentError
		if errors.As(err, &de) {
			ptr = de.Pointer()
		}
		p.Line, p.Column = posOf(src.find(ptr))
		return append([]problem{p}, schemaProblems(data, src)...), 0
	}
	var out []problem
	for _, fp := range set.Problems() {
		out = append(out, flagProblem(src, fp))
	}
	for _, w := range logged.records {
		p := problem{Severity: "warning", Flag: w.flag, Message: w.msg, Source: "flagsnap"}
		p.Line, p.Column = posOf(src.find(w.pointer))
		out = append(out, p)
	}
	out = append(out, schemaProblems(data, src)...)
	// In file order, as a reader goes through the file; the flag's own
	// problem before the schema's at the same place.
	slices.SortStableFunc(out, func(a, b problem) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return out, set.Len()
}

// flagProblem reports a flag's problem where the evaluator says it is
// written: its path, not its message, which is free to change.
func flagProblem(src *sourceMap, fp evaluator.FlagProblem) problem {
	p := problem{Severity: "error", Flag: fp.Flag, Message: fp.Err.Error(), Source: "flagsnap"}
	p.Line, p.Column = posOf(src.find(fp.Pointer()))
	return p
}

func schemaProblems(data []byte, src *sourceMap) []problem {
	violations, err := checkSchema(data)
	if err != nil {
		return []problem{{Severity: "warning", Message: "cannot check against flagd's schema: " + err.Error(), Source: "schema"}}
	}
	out := make([]problem, 0, len(violations))
	for _, v := range violations {
		p := problem{Severity: "warning", Flag: flagOfPointer(v.pointer, src), Source: "schema", Message: v.msg}
		if v.pointer != "" {
			p.Message = fmt.Sprintf("%s: %s", v.pointer, v.msg)
		}
		p.Line, p.Column = posOf(src.find(v.pointer))
		out = append(out, p)
	}
	return out
}

// flagOfPointer names the flag a pointer is inside, if any.
func flagOfPointer(ptr string, src *sourceMap) string {
	for key, fp := range src.flags {
		if ptr == fp || strings.HasPrefix(ptr, fp+"/") {
			return key
		}
	}
	return ""
}

func posOf(p pos) (int, int) { return p.line, p.column }

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
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "flag":
			rec.flag = a.Value.String()
		case "pointer":
			rec.pointer = a.Value.String()
		}
		return true
	})
	l.records = append(l.records, rec)
	return nil
}

func (l *loadLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *loadLog) WithGroup(string) slog.Handler      { return l }
