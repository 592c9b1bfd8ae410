package flagsnap

// The page of DebugHandler: what it shows, gathered from the provider for
// one request, and its rendering through html/template, which escapes
// everything that comes from a flag document or a request.

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/internal/jsonline"
)

const (
	// maxDebugRows bounds the table of flags, so that a set of 100,000
	// flags makes a page of a few hundred kilobytes, not a hundred
	// megabytes.
	maxDebugRows = 500
	// maxDebugVariants bounds the variants listed in one row.
	maxDebugVariants = 20
)

var (
	//go:embed debug.html
	debugHTML string
	//go:embed debug.css
	debugCSS string

	// debugStyle is the page's style sheet: debug.css and a class for
	// each whole percentage, which the bars use instead of style
	// attributes, which the policy would have to allow by hash one by one.
	debugStyle = debugCSS + widthClasses()
	// debugStyleHash lets the Content-Security-Policy allow the style
	// sheet and nothing else.
	debugStyleHash = styleHash(debugStyle)

	debugTemplate = template.Must(template.New("debug").Funcs(template.FuncMap{
		"when":    when,
		"ago":     ago,
		"compact": jsonline.String,
	}).Parse(debugHTML))
)

func widthClasses() string {
	var b strings.Builder
	for i := 0; i <= 100; i++ {
		fmt.Fprintf(&b, ".w%d{width:%d%%}", i, i)
	}
	return b.String() + "\n"
}

func styleHash(css string) string {
	sum := sha256.Sum256([]byte(css))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// debugPage is what the page shows.
type debugPage struct {
	Style       template.CSS
	Status      SourceStatus
	SetMetadata map[string]any
	Loaded      bool // a flag set is in force
	Counting    bool // usage is counted (not WithoutUsage)
	Since       time.Time

	// The table: its filter and order, the rows shown, how many flags
	// match the filter and how many of those are not shown.
	Query   string
	Sort    string
	Sorts   []debugLink
	Rows    []debugRow
	Matched int
	More    int

	Missing        []debugMissing
	MissingDropped uint64

	// The evaluation form's input, the evaluation it asked for, and why
	// it could not be made.
	Flag, Context string
	Result        *debugResult
	ResultJSON    string // the address of the same evaluation as JSON
	InputError    string
}

// debugLink is a link to the page with other query parameters.
type debugLink struct {
	Label, Href string
	Current     bool
}

// debugRow is one flag of the table.
type debugRow struct {
	evaluator.FlagInfo
	// Layer is the override that defines the flag, "" for the source's
	// flags: an override left in place must show.
	Layer         string
	Broken        string
	Shares        []debugShare
	MoreVariants  int
	Evaluations   uint64
	Errors        uint64
	LastEvaluated time.Time
}

// debugShare is the part of a flag's evaluations that served a variant.
type debugShare struct {
	Name    string
	Count   uint64
	Percent int // of the flag's evaluations, rounded
	Default bool
	Former  bool // counted, but the flag no longer has it
}

type debugMissing struct {
	Key   string
	Count uint64
}

// debugSorts are the orders of the table, by the value of sort.
var debugSorts = []struct{ name, label string }{
	{"key", "key"},
	{"evaluations", "most evaluated"},
	{"errors", "most errors"},
}

// servePage renders the page for query, with status 400 when the
// evaluation it asks for has input that cannot be read.
func (h *debugHandler) servePage(w http.ResponseWriter, query url.Values) {
	page := h.page(query)
	var b bytes.Buffer
	if err := debugTemplate.Execute(&b, page); err != nil {
		http.Error(w, "flagsnap debug: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if page.InputError != "" {
		w.WriteHeader(http.StatusBadRequest)
	}
	_, _ = w.Write(b.Bytes())
}

// page gathers what the page shows for query.
func (h *debugHandler) page(query url.Values) *debugPage {
	set := h.p.flags()
	u := h.p.Usage()
	page := &debugPage{
		Style:       template.CSS(debugStyle),
		Status:      h.p.SourceStatus(),
		SetMetadata: h.p.FlagSetMetadata(),
		Loaded:      set != nil,
		Counting:    h.p.usage != nil,
		Since:       u.Since,
		Query:       query.Get("q"),
		Sort:        query.Get("sort"),
		Flag:        query.Get("flag"),
		Context:     query.Get("context"),
	}
	if !slices.ContainsFunc(debugSorts, func(s struct{ name, label string }) bool { return s.name == page.Sort }) {
		page.Sort = "key"
	}
	page.Sorts = sortLinks(query, page.Sort)
	if set != nil {
		page.Rows, page.Matched = debugRows(set, u, page.Query, page.Sort)
		page.More = page.Matched - len(page.Rows)
	}
	page.Missing, page.MissingDropped = missingRows(u), u.MissingDropped
	if page.Flag != "" || page.Context != "" {
		h.evaluateForPage(page)
	}
	return page
}

// evaluateForPage makes the evaluation the page's form asked for.
func (h *debugHandler) evaluateForPage(page *debugPage) {
	if page.Flag == "" {
		page.InputError = "give the key of the flag to evaluate"
		return
	}
	ctx, err := debugContext(page.Context)
	if err != nil {
		page.InputError = err.Error()
		return
	}
	res := h.evaluate(page.Flag, ctx)
	page.Result = &res
	page.ResultJSON = "evaluate?" + url.Values{"flag": {page.Flag}, "context": {page.Context}}.Encode()
}

// sortLinks are the links that order the table, keeping the rest of the
// query.
func sortLinks(query url.Values, current string) []debugLink {
	links := make([]debugLink, len(debugSorts))
	for i, s := range debugSorts {
		q := maps.Clone(query)
		q.Set("sort", s.name)
		links[i] = debugLink{Label: s.label, Href: "?" + q.Encode(), Current: s.name == current}
	}
	return links
}

// debugRows are the rows of the flags whose key contains q (ignoring
// case), in the order sortBy names, at most maxDebugRows; matched is how
// many flags match.
func debugRows(set *evaluator.FlagSet, u Usage, q, sortBy string) (rows []debugRow, matched int) {
	keys := set.Keys()
	if q != "" {
		lq := strings.ToLower(q)
		keys = slices.DeleteFunc(keys, func(k string) bool { return !strings.Contains(strings.ToLower(k), lq) })
	}
	switch sortBy {
	case "evaluations":
		slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(u.Flags[b].Evaluations, u.Flags[a].Evaluations) })
	case "errors":
		slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(u.Flags[b].Errors, u.Flags[a].Errors) })
	}
	matched = len(keys)
	keys = keys[:min(len(keys), maxDebugRows)]
	rows = make([]debugRow, 0, len(keys))
	layers := set.Layers()
	for _, k := range keys {
		if info, ok := set.Info(k); ok {
			row := debugRowOf(info, u.Flags[k])
			if l := set.Layer(k); l > 0 {
				row.Layer = layers[l]
			}
			rows = append(rows, row)
		}
	}
	return rows, matched
}

// debugRowOf is the row of a flag and its usage: each variant's share of
// its evaluations, the flag's variants first, then those it no longer has
// that were counted before the flag changed.
func debugRowOf(info evaluator.FlagInfo, fu FlagUsage) debugRow {
	row := debugRow{FlagInfo: info, Evaluations: fu.Evaluations, Errors: fu.Errors, LastEvaluated: fu.LastEvaluated}
	if info.Broken != nil {
		row.Broken = info.Broken.Error()
	}
	share := func(name string, former bool) debugShare {
		n := fu.Variants[name]
		s := debugShare{Name: name, Count: n, Default: name == info.DefaultVariant && !former, Former: former}
		if fu.Evaluations > 0 {
			s.Percent = int((n*100 + fu.Evaluations/2) / fu.Evaluations)
		}
		return s
	}
	for _, name := range info.Variants {
		row.Shares = append(row.Shares, share(name, false))
	}
	for _, name := range slices.Sorted(maps.Keys(fu.Variants)) {
		if !slices.Contains(info.Variants, name) {
			row.Shares = append(row.Shares, share(name, true))
		}
	}
	if len(row.Shares) > maxDebugVariants {
		row.MoreVariants = len(row.Shares) - maxDebugVariants
		row.Shares = row.Shares[:maxDebugVariants]
	}
	return row
}

// missingRows are the missing keys, the most asked for first.
func missingRows(u Usage) []debugMissing {
	rows := make([]debugMissing, 0, len(u.Missing))
	for k, n := range u.Missing {
		rows = append(rows, debugMissing{k, n})
	}
	slices.SortFunc(rows, func(a, b debugMissing) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Key, b.Key)) })
	return rows
}

// when is a moment as the page shows it: UTC to the second, and how long
// ago.
func when(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z") + " (" + ago(t) + ")"
}

// ago is how long ago t was, to the second, for a table's narrow column.
func ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return time.Since(t).Round(time.Second).String() + " ago"
}
