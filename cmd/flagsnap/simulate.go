package main

import (
	"cmp"
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/fractional"
)

const simulateUsage = `Usage: flagsnap simulate FILE FLAG [--users N] [--key-template 'user-{i}'] [--context JSON]
                         [--fractional vN] [--against OTHER_FILE] [--against-fractional vN]
                         [--format text|json|csv] [--svg OUT]

Resolves a flag for N synthetic users, whose targeting keys come from the
key template ({i} is the user's number, from 0), and prints each variant's
share next to the weight the flag's fractional rule gives it, the deviation
in percentage points and a chi-square test of the shares against the
weights (a p-value below 0.001 means the split is not what the weights say).
The weights are those of the first fractional the rule reaches for the
first user.

With --against (another flag file) or --against-fractional (another
bucketing version, of the same file unless --against is given) it also
prints how many users get another variant there, and the transitions
between variants. --svg writes the distribution (and the transition matrix)
as an SVG chart. Runs longer than a second show their progress on stderr;
Ctrl-C stops them.

Example:
  flagsnap simulate flags.json banner-color --users 100000 --against-fractional v3
`

// Labels of the outcomes without a variant, in tables and charts.
const (
	labelDefault  = "(default)"
	labelDisabled = "(disabled)"
)

type simOptions struct {
	set, against *evaluator.FlagSet
	key          string
	users        int
	template     string
	baseContext  map[string]any
}

// simulation is the outcome of a run: how many users get each outcome and,
// with --against, each pair of outcomes (the outcomes in the other set and
// the users who changed follow from the pairs).
type simulation struct {
	counts      map[string]int
	transitions map[[2]string]int // with --against: (here, there) → users
}

// simFlags is simulate's options as given.
type simFlags struct {
	users                      int
	template, inline           string
	frac, against, againstFrac string
	format, svg                string
}

func (f *simFlags) define(fs *flag.FlagSet) {
	fs.IntVar(&f.users, "users", 100000, "number of synthetic users")
	fs.StringVar(&f.template, "key-template", "user-{i}", "targeting key of user i")
	fs.StringVar(&f.inline, "context", "", "context every user shares, as a JSON object")
	fs.StringVar(&f.frac, "fractional", "", "fractional bucketing version: v1, v2 or v3 (default v2)")
	fs.StringVar(&f.against, "against", "", "compare with this flag file")
	fs.StringVar(&f.againstFrac, "against-fractional", "", "compare with this bucketing version (default: --fractional)")
	fs.StringVar(&f.format, "format", "text", "output format: text, json or csv")
	fs.StringVar(&f.svg, "svg", "", "write the chart to this SVG file")
}

// simRun is a simulation as the command line asks for it, its flag sets
// loaded.
type simRun struct {
	simOptions
	path, otherPath       string // otherPath is "" without a comparison
	version, otherVersion fractional.Version
	format, svg           string
}

func (c *cmd) simulate(ctx context.Context, args []string) int {
	var f simFlags
	fs := c.newFlagSet(simulateUsage)
	f.define(fs)
	pos, status, ok := c.parseExactly(fs, args, 2, "FILE and FLAG")
	if !ok {
		return status
	}
	run, err := f.toRun(pos[0], pos[1])
	if err == nil {
		err = run.loadFlagSets()
	}
	if err != nil {
		return c.fail(exitBadInput, "%v", err)
	}
	// The chart's file is made before the run, so that a path that cannot
	// be written is bad input said at once, not after the simulation.
	var svg *os.File
	if run.svg != "" {
		if svg, err = os.Create(run.svg); err != nil {
			return c.fail(exitBadInput, "--svg: %v", err)
		}
	}
	p := newProgress(c.stderr, run.users)
	sim, err := simulateUsers(ctx, run.simOptions, p.update)
	p.finish()
	if err != nil {
		if svg != nil {
			_ = svg.Close()
			_ = os.Remove(run.svg)
		}
		return c.fail(exitInterrupted, "%v", err)
	}
	rep := newSimReport(run.simOptions, sim)
	rep.File, rep.Fractional = run.path, run.version.String()
	if run.otherPath != "" {
		rep.Against.File, rep.Against.Fractional = run.otherPath, run.otherVersion.String()
	}
	if svg != nil {
		if err := writeSVGFile(svg, rep); err != nil {
			return c.fail(exitBadInput, "--svg: %v", err)
		}
	}
	switch run.format {
	case "json":
		writeJSON(c.stdout, rep)
	case "csv":
		writeCSV(c.stdout, rep)
	default:
		printSimulation(c.stdout, rep)
	}
	return exitOK
}

// toRun checks the options and turns them into a run; the files are read
// afterwards (see loadFlagSets), so that a mistyped option is reported
// without waiting for them.
func (f *simFlags) toRun(path, key string) (*simRun, error) {
	if f.users < 1 {
		return nil, fmt.Errorf("--users must be at least 1, not %d", f.users)
	}
	if !strings.Contains(f.template, "{i}") {
		return nil, fmt.Errorf("--key-template must contain {i}, not %q", f.template)
	}
	if err := checkOneOf("format", f.format, "text", "json", "csv"); err != nil {
		return nil, err
	}
	r := &simRun{path: path, format: f.format, svg: f.svg}
	var err error
	if r.version, err = parseVersion("fractional", f.frac); err != nil {
		return nil, err
	}
	r.otherVersion = r.version
	if f.againstFrac != "" {
		if r.otherVersion, err = parseVersion("against-fractional", f.againstFrac); err != nil {
			return nil, err
		}
	}
	if f.against != "" || f.againstFrac != "" {
		r.otherPath = cmp.Or(f.against, path)
	}
	r.simOptions = simOptions{key: key, users: f.users, template: f.template}
	if r.baseContext, err = readContext(f.inline, ""); err != nil {
		return nil, err
	}
	return r, nil
}

// loadFlagSets reads the flag file, and the one to compare with, each
// under its bucketing version.
func (r *simRun) loadFlagSets() error {
	var err error
	if _, r.set, err = loadFlags(r.path, evaluator.WithFractionalVersion(r.version)); err != nil {
		return err
	}
	if !hasFlag(r.set, r.key) {
		return undefinedFlag(r.set, r.key, r.path)
	}
	if r.otherPath == "" {
		return nil
	}
	if _, r.against, err = loadFlags(r.otherPath, evaluator.WithFractionalVersion(r.otherVersion)); err != nil {
		return fmt.Errorf("--against %v", err)
	}
	if !hasFlag(r.against, r.key) {
		return undefinedFlag(r.against, r.key, r.otherPath)
	}
	return nil
}

// simulateUsers resolves the flag for every user, checking ctx as it goes.
// One context map serves every user: the evaluator reads it in place and
// keeps nothing of it.
func simulateUsers(ctx context.Context, o simOptions, progress func(done int)) (simulation, error) {
	sim := simulation{counts: map[string]int{}}
	if o.against != nil {
		sim.transitions = map[[2]string]int{}
	}
	evalCtx := userContext(o.baseContext, o.template, 0)
	for i := range o.users {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return sim, fmt.Errorf("interrupted after %d of %d users", i, o.users)
			}
			progress(i)
		}
		evalCtx["targetingKey"] = userKey(o.template, i)
		here := outcomeLabel(o.set, o.key, evalCtx)
		sim.counts[here]++
		if o.against != nil {
			sim.transitions[[2]string{here, outcomeLabel(o.against, o.key, evalCtx)}]++
		}
	}
	return sim, nil
}

// outcomeLabel is the variant a user gets, or what stands in for one. Any
// typed accessor names the variant, even one of another type (the answer
// is then TYPE_MISMATCH), so the cheapest one serves every flag.
func outcomeLabel(set *evaluator.FlagSet, key string, ctx map[string]any) string {
	r := set.ResolveBool(key, false, ctx)
	switch {
	case r.Variant != "":
		return r.Variant
	case r.Err != nil:
		return "(error " + r.Err.Code.String() + ")"
	case r.Reason == evaluator.ReasonDisabled:
		return labelDisabled
	}
	return labelDefault
}

// simReport is what simulate prints, in every format.
type simReport struct {
	Flag       string       `json:"flag"`
	File       string       `json:"file"`
	Fractional string       `json:"fractional"`
	Users      int          `json:"users"`
	Variants   []variantRow `json:"variants"`
	// Weighted says whether the weights of a fractional rule were found;
	// without them there is no expected share and no test.
	Weighted  bool           `json:"weighted"`
	ChiSquare *chiSquare     `json:"chiSquare,omitempty"`
	Against   *againstReport `json:"against,omitempty"`
}

type variantRow struct {
	Variant string  `json:"variant"`
	Users   int     `json:"users"`
	Share   float64 `json:"share"`
	// Weight is the configured share, 0 for an outcome outside the split.
	Weight float64 `json:"weight"`
	// Deviation is Share-Weight in percentage points, 0 without weights.
	Deviation float64 `json:"deviation"`
}

type chiSquare struct {
	Statistic        float64 `json:"statistic"`
	DegreesOfFreedom int     `json:"degreesOfFreedom"`
	PValue           float64 `json:"pValue"`
}

type againstReport struct {
	File        string       `json:"file"`
	Fractional  string       `json:"fractional"`
	Changed     int          `json:"changed"`
	ChangedPct  float64      `json:"changedShare"`
	Weighted    bool         `json:"weighted"`
	Variants    []variantRow `json:"variants"`
	Transitions []transition `json:"transitions"`
}

type transition struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Users int    `json:"users"`
}

func newSimReport(o simOptions, sim simulation) *simReport {
	weights := configuredWeights(o.set, o.key, o.baseContext, o.template)
	rep := &simReport{Flag: o.key, Users: o.users, Weighted: len(weights) > 0}
	rep.Variants = outcomeRows(sim.counts, weights, o.users)
	if rep.Weighted {
		rep.ChiSquare = chiSquareTest(rep.Variants, o.users)
	}
	if o.against != nil {
		rep.Against = newAgainstReport(o, sim, rep.Variants)
	}
	return rep
}

// newAgainstReport is the comparison with the other flag set: its outcomes,
// the users who changed, and the transitions between rows and its own rows.
func newAgainstReport(o simOptions, sim simulation, rows []variantRow) *againstReport {
	a := &againstReport{}
	other := map[string]int{}
	for t, n := range sim.transitions {
		other[t[1]] += n
		if t[0] != t[1] {
			a.Changed += n
		}
	}
	a.ChangedPct = float64(a.Changed) / float64(o.users)
	otherWeights := configuredWeights(o.against, o.key, o.baseContext, o.template)
	a.Variants, a.Weighted = outcomeRows(other, otherWeights, o.users), len(otherWeights) > 0
	for _, from := range rows {
		for _, to := range a.Variants {
			if n := sim.transitions[[2]string{from.Variant, to.Variant}]; n > 0 {
				a.Transitions = append(a.Transitions, transition{From: from.Variant, To: to.Variant, Users: n})
			}
		}
	}
	return a
}

// weight is one bucket of a fractional rule.
type weight struct {
	variant string
	share   float64
}

// outcomeRows lists the variants of the split in its order, then any
// other outcome by decreasing count.
func outcomeRows(counts map[string]int, weights []weight, users int) []variantRow {
	var out []variantRow
	row := map[string]int{} // variant → its index in out
	for _, w := range weights {
		if i, ok := row[w.variant]; ok {
			// Two buckets of one variant: their weights add up.
			out[i].Weight += w.share
			continue
		}
		row[w.variant] = len(out)
		out = append(out, variantRow{Variant: w.variant, Weight: w.share})
	}
	rest := slices.Collect(maps.Keys(counts))
	slices.SortFunc(rest, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	for _, v := range rest {
		if _, ok := row[v]; !ok {
			out = append(out, variantRow{Variant: v})
		}
	}
	for i := range out {
		r := &out[i]
		r.Users = counts[r.Variant]
		r.Share = float64(r.Users) / float64(users)
		if len(weights) > 0 {
			r.Deviation = 100 * (r.Share - r.Weight)
		}
	}
	return out
}

// chiSquareTest tests the counts against the weights (Pearson's
// chi-square, goodness of fit). Users outside the split make the fit
// impossible: the p-value is 0.
func chiSquareTest(rows []variantRow, users int) *chiSquare {
	var stat float64
	k := 0
	for _, r := range rows {
		expected := r.Weight * float64(users)
		if expected == 0 {
			if r.Users > 0 {
				stat = math.Inf(1)
			}
			continue
		}
		k++
		d := float64(r.Users) - expected
		stat += d * d / expected
	}
	if k < 2 {
		return nil
	}
	cs := &chiSquare{Statistic: stat, DegreesOfFreedom: k - 1}
	if math.IsInf(stat, 1) {
		cs.Statistic = -1 // JSON has no infinity; the p-value says it all
		return cs
	}
	cs.PValue = distuv.ChiSquared{K: float64(k - 1)}.Survival(stat)
	return cs
}

// configuredWeights are the weights of the first fractional rule the flag's
// targeting reaches for the first user, nil when it reaches none.
func configuredWeights(set *evaluator.FlagSet, key string, base map[string]any, template string) []weight {
	return fractionalWeights(set, key, userContext(base, template, 0))
}

// userContext is the context of user i: a copy of base, which the caller's
// options own, with the user's targeting key.
func userContext(base map[string]any, template string, i int) map[string]any {
	ctx := maps.Clone(base)
	if ctx == nil {
		ctx = map[string]any{}
	}
	ctx["targetingKey"] = userKey(template, i)
	return ctx
}

// userKey is the targeting key of user i.
func userKey(template string, i int) string {
	return strings.ReplaceAll(template, "{i}", strconv.Itoa(i))
}

func printSimulation(w io.Writer, r *simReport) {
	fmt.Fprintf(w, "%s in %s, %s users, fractional %s\n\n", r.Flag, r.File, thousands(r.Users), r.Fractional)
	printRows(w, r.Variants, r.Weighted)
	if cs := r.ChiSquare; cs != nil {
		fmt.Fprintln(w)
		if cs.Statistic < 0 {
			fmt.Fprintln(w, "chi-square: some users fall outside the split; p-value 0")
		} else {
			dof := plural(cs.DegreesOfFreedom, "degree")
			fmt.Fprintf(w, "chi-square %.2f, %s of freedom, p-value %.3g: %s\n",
				cs.Statistic, dof, cs.PValue, fitVerdict(cs.PValue))
		}
	}
	a := r.Against
	if a == nil {
		return
	}
	fmt.Fprintf(w, "\nagainst %s, fractional %s: %s of %s users (%.2f%%) get another variant\n\n",
		a.File, a.Fractional, thousands(a.Changed), thousands(r.Users), 100*a.ChangedPct)
	printRows(w, a.Variants, a.Weighted)
	fmt.Fprintln(w)
	printMatrix(w, r)
}

func fitVerdict(p float64) string {
	if p < 0.001 {
		return "the shares do not fit the weights"
	}
	return "the shares fit the weights"
}

func printRows(w io.Writer, rows []variantRow, weighted bool) {
	width := len("variant")
	for _, r := range rows {
		width = max(width, len(r.Variant))
	}
	if weighted {
		fmt.Fprintf(w, "%-*s  %9s  %7s  %7s  %9s\n", width, "variant", "users", "share", "weight", "deviation")
	} else {
		fmt.Fprintf(w, "%-*s  %9s  %7s\n", width, "variant", "users", "share")
	}
	for _, r := range rows {
		if weighted {
			fmt.Fprintf(w, "%-*s  %9s  %6.2f%%  %6.2f%%  %+9.2f  %s\n", width, r.Variant, thousands(r.Users), 100*r.Share, 100*r.Weight, r.Deviation, shareBar(r.Share))
		} else {
			fmt.Fprintf(w, "%-*s  %9s  %6.2f%%  %s\n", width, r.Variant, thousands(r.Users), 100*r.Share, shareBar(r.Share))
		}
	}
}

// printMatrix prints the users of each (before, after) pair; rows are the
// variants in FILE, columns those in the file compared with.
func printMatrix(w io.Writer, r *simReport) {
	from, to := r.Variants, r.Against.Variants
	users := map[[2]string]int{}
	for _, t := range r.Against.Transitions {
		users[[2]string{t.From, t.To}] = t.Users
	}
	width := len("from \\ to")
	for _, f := range from {
		width = max(width, len(f.Variant))
	}
	col := 9
	for _, t := range to {
		col = max(col, len(t.Variant))
	}
	fmt.Fprintf(w, "%-*s", width, "from \\ to")
	for _, t := range to {
		fmt.Fprintf(w, "  %*s", col, t.Variant)
	}
	fmt.Fprintln(w)
	for _, f := range from {
		fmt.Fprintf(w, "%-*s", width, f.Variant)
		for _, t := range to {
			fmt.Fprintf(w, "  %*s", col, thousands(users[[2]string{f.Variant, t.Variant}]))
		}
		fmt.Fprintln(w)
	}
}

// shareBar draws share (0 to 1) as a bar 50 cells long at 100%, in
// eighths of a cell.
func shareBar(share float64) string {
	eighths := int(math.Round(share * 50 * 8))
	const partial = " ▏▎▍▌▋▊▉"
	full := strings.Repeat("█", eighths/8)
	if rest := eighths % 8; rest > 0 {
		return full + string([]rune(partial)[rest])
	}
	return full
}

// thousands writes n with comma separators.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func writeCSV(w io.Writer, r *simReport) {
	cw := csv.NewWriter(w)
	num := func(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }
	row := func(table string, v variantRow, weighted bool) []string {
		out := []string{table, v.Variant, "", strconv.Itoa(v.Users), num(v.Share, -1), "", ""}
		if weighted {
			out[5], out[6] = num(v.Weight, -1), num(v.Deviation, 4)
		}
		return out
	}
	_ = cw.Write([]string{"table", "variant", "to", "users", "share", "weight", "deviation"})
	for _, v := range r.Variants {
		_ = cw.Write(row("distribution", v, r.Weighted))
	}
	if a := r.Against; a != nil {
		for _, v := range a.Variants {
			_ = cw.Write(row("against", v, a.Weighted))
		}
		for _, t := range a.Transitions {
			_ = cw.Write([]string{"transition", t.From, t.To, strconv.Itoa(t.Users), num(float64(t.Users)/float64(r.Users), -1), "", ""})
		}
	}
	cw.Flush()
}

// progress reports on stderr how far a run is, once it has taken longer
// than a second: short runs stay silent.
type progress struct {
	w     io.Writer
	total int
	start time.Time
	last  time.Time
	shown bool
}

func newProgress(w io.Writer, total int) *progress {
	now := time.Now()
	return &progress{w: w, total: total, start: now, last: now}
}

func (p *progress) update(done int) {
	now := time.Now()
	if now.Sub(p.start) < time.Second || now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last, p.shown = now, true
	fmt.Fprintf(p.w, "\rsimulating: %3d%% (%s of %s users)", 100*done/p.total, thousands(done), thousands(p.total))
}

func (p *progress) finish() {
	if p.shown {
		fmt.Fprintln(p.w)
	}
}

// writeSVGFile writes r's chart to f, and closes it.
func writeSVGFile(f *os.File, r *simReport) error {
	werr := writeSVG(f, r)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}
