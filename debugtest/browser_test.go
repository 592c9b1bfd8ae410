package debugtest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/internal/leaktest"
	"github.com/flagsnap/flagsnap/source"
)

func TestMain(m *testing.M) {
	os.Exit(leaktest.Run(m))
}

const (
	script = `<script>alert(1)</script>`
	img    = `"><img src=x onerror=alert(1)>`
)

// flags are a shop's flags and two whose keys and variants would be markup
// if the page did not escape them.
var flags = `{"metadata": {"flagSetId": "shop"}, "flags": {
  "new-checkout": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
    "targeting": {"if": [{"ends_with": [{"var": "email"}, "@example.com"]}, "on"]}},
  "checkout-banner": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "red",
    "targeting": {"fractional": [["red", 50], ["blue", 50]]}},
  "search-limit": {"state": "ENABLED", "variants": {"low": 10, "high": 100}, "defaultVariant": "low"},
  ` + quote(script) + `: {"state": "ENABLED", "variants": {` + quote(script) + `: true}, "defaultVariant": ` + quote(script) + `,
    "metadata": {"owner": ` + quote(img) + `}},
  ` + quote(img) + `: {"state": "DISABLED", "variants": {` + quote(img) + `: 1}, "defaultVariant": ` + quote(img) + `}
}}`

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// browser is the Chromium or Chrome to drive, or a skip that says where it
// was looked for.
func browser(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("FLAGSNAP_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no browser: set FLAGSNAP_CHROMIUM to a Chromium or Chrome binary, or put chromium, chromium-browser or google-chrome on PATH (Debian: apt-get install chromium)")
	return ""
}

// pageProblems gathers what the page must never cause: a dialog (a script
// that ran), an exception, an error in the console or the browser's log,
// which is where a Content-Security-Policy violation is reported.
type pageProblems struct {
	mu   sync.Mutex
	list []string
}

func (p *pageProblems) listen(ev any) {
	var problem string
	switch ev := ev.(type) {
	case *page.EventJavascriptDialogOpening:
		problem = "dialog: " + ev.Message
	case *runtime.EventExceptionThrown:
		problem = "exception: " + ev.ExceptionDetails.Text
	case *log.EventEntryAdded:
		// A page answered with an error status is logged as a network
		// error; the test checks the statuses itself.
		if ev.Entry.Source == log.EntrySourceNetwork {
			break
		}
		if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning || ev.Entry.Source == log.EntrySourceSecurity {
			problem = fmt.Sprintf("log (%s, %s): %s %s", ev.Entry.Source, ev.Entry.Level, ev.Entry.Text, ev.Entry.URL)
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
			problem = "console: " + string(ev.Type)
		}
	}
	if problem != "" {
		p.mu.Lock()
		p.list = append(p.list, problem)
		p.mu.Unlock()
	}
}

func (p *pageProblems) check(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.list {
		t.Error(s)
	}
}

// startBrowser starts a headless browser for the test, with a profile of
// its own, and returns its context, which ends with the test or within
// the bound.
func startBrowser(t *testing.T, exe string) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	profile, err := os.MkdirTemp("", "flagsnap-browser")
	if err != nil {
		t.Fatal(err)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
	)
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		// The browser's helpers may write to the profile for a moment
		// after it exits.
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return bctx
}

// The page loads under its own Content-Security-Policy with its style
// applied, shows the flags as text, and its evaluation form, filled in and
// submitted as a person would, shows the evaluation the provider would
// make, with the explanation flagsnap eval --explain prints. A flag an
// override defines is marked, visibly, with the override's path.
func TestDebugPageInABrowser(t *testing.T) {
	exe := browser(t)
	// An override raises search-limit, which the page must mark.
	override := filepath.Join(t.TempDir(), "override.json")
	if err := os.WriteFile(override, []byte(searchLimitHigh), 0o644); err != nil {
		t.Fatal(err)
	}
	provider, err := flagsnap.NewProvider(flagsnap.WithFlags([]byte(flags)), flagsnap.WithoutEnv(), flagsnap.WithOverrideFile(override))
	if err != nil {
		t.Fatal(err)
	}
	defer provider.Shutdown()
	mux := http.NewServeMux()
	mux.Handle("/debug/flags/", http.StripPrefix("/debug/flags", flagsnap.DebugHandler(provider)))
	if err := provider.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); len(provider.SourceStatus().Overridden) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the override is not in force within 5s")
		}
	}
	for i := range 10 {
		provider.StringEvaluation(context.Background(), "checkout-banner", "", openfeature.FlattenedContext{"targetingKey": fmt.Sprint("user-", i)})
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx := startBrowser(t, exe)
	var problems pageProblems
	if err := chromedp.Listen(ctx, problems.listen); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	defer problems.check(t)

	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(srv.URL+"/debug/flags/"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusOK {
		t.Fatalf("the page: %d", resp.Status)
	}
	t.Run("rendering", func(t *testing.T) { checkRendering(t, ctx) })
	t.Run("override", func(t *testing.T) { checkOverrideMark(t, ctx, override) })

	// An evaluation, through the form.
	const userCtx = `{"targetingKey": "user-42", "email": "ada@example.com"}`
	before := provider.Usage().Flags["new-checkout"].Evaluations
	status := submit(t, ctx, "form.evaluate", map[string]string{`input[name="flag"]`: "new-checkout", `textarea[name="context"]`: userCtx})
	if status != http.StatusOK {
		t.Errorf("evaluation: status %d", status)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	if u.Path != "/debug/flags/" || u.Query().Get("flag") != "new-checkout" || u.Query().Get("context") != userCtx {
		t.Errorf("the form went to %s", loc)
	}
	// The flags in force are the memory source's with the override over
	// them, and the explanation names the layer of the flag.
	set, err := evaluator.Load([]byte(flags))
	if err != nil {
		t.Fatal(err)
	}
	over, err := evaluator.Load([]byte(searchLimitHigh))
	if err != nil {
		t.Fatal(err)
	}
	set = evaluator.Layered(evaluator.Layer{Name: source.MemoryOrigin, Set: set}, evaluator.Layer{Name: override, Set: over})
	x, _ := set.Explain("new-checkout", map[string]any{"targetingKey": "user-42", "email": "ada@example.com"})
	want := map[string]string{"#result-value": "true", "#result-variant": "on", "#result-reason": "TARGETING_MATCH", "#result-error": "none", "#explanation": x.String()}
	checkTexts(t, ctx, want)
	if after := provider.Usage().Flags["new-checkout"].Evaluations; after != before {
		t.Errorf("the page's evaluation was counted: %d, then %d", before, after)
	}

	// The table's filter keeps the evaluation on the page.
	if status := submit(t, ctx, "form.filter", map[string]string{`form.filter input[name="q"]`: "CHECKOUT"}); status != http.StatusOK {
		t.Errorf("filter: status %d", status)
	}
	keys, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('td.key code')].map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(keys, " ") != "checkout-banner new-checkout" {
		t.Errorf("filtered rows: %q", keys)
	}
	checkTexts(t, ctx, map[string]string{"#result-variant": "on"})

	// A flag that does not exist, then a context that is not JSON.
	submit(t, ctx, "form.evaluate", map[string]string{`input[name="flag"]`: "new-chekout", `textarea[name="context"]`: `{}`})
	checkTexts(t, ctx, map[string]string{"#result-reason": "ERROR", "#result-error": `FLAG_NOT_FOUND: flag "new-chekout" not found; did you mean "new-checkout"?`})
	if status := submit(t, ctx, "form.evaluate", map[string]string{`textarea[name="context"]`: `{"email": `}); status != http.StatusBadRequest {
		t.Errorf("bad context: status %d", status)
	}
	msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("input-error")))
	if err != nil || !strings.Contains(msg, "the context is not a JSON object") {
		t.Errorf("bad context: %q, %v", msg, err)
	}

	// A hostile key evaluated: its metadata shows as text too.
	submit(t, ctx, "form.evaluate", map[string]string{`input[name="flag"]`: script, `textarea[name="context"]`: ``})
	checkTexts(t, ctx, map[string]string{"#result-variant": script, "#result-reason": "STATIC"})
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`[...document.querySelectorAll('#result dd code')].some(c => c.textContent.includes(`+quote(img[2:])+`))`))
	if err != nil || !shown {
		t.Errorf("the hostile metadata is not shown as text: %v", err)
	}
	checkNoMarkup(t, ctx)
}

// searchLimitHigh is an override that serves search-limit's high variant.
const searchLimitHigh = `{"flags": {
  "search-limit": {"state": "ENABLED", "variants": {"low": 10, "high": 100}, "defaultVariant": "high"}
}}`

// checkOverrideMark checks that the row of the overridden flag, and only
// it, shows the override it comes from, in a box of its own that is laid
// out and colored as a warning, and that the status lists the override.
func checkOverrideMark(t *testing.T, ctx context.Context, override string) {
	t.Helper()
	type mark struct {
		Key, Text, Color string
		Width, Height    float64
	}
	marks, err := chromedp.Run(ctx, chromedp.Evaluate[[]mark](`[...document.querySelectorAll('td.key .layer')].map(m => {
		const r = m.getBoundingClientRect();
		return {Key: m.parentElement.querySelector('code').textContent, Text: m.textContent,
			Color: getComputedStyle(m).color, Width: r.width, Height: r.height};
	})`))
	if err != nil {
		t.Fatal(err)
	}
	if len(marks) != 1 || marks[0].Key != "search-limit" || marks[0].Text != "from override "+override {
		t.Fatalf("marks %+v, want search-limit's, from %s", marks, override)
	}
	// The warning color of the style sheet, --warn.
	if m := marks[0]; m.Width < 1 || m.Height < 1 || m.Color != "rgb(154, 103, 0)" {
		t.Errorf("the mark is not shown as a warning: %+v", m)
	}
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("dd.override")))
	if err != nil || !strings.Contains(status, override) || !strings.Contains(status, "serving") {
		t.Errorf("the status's override: %q, %v", status, err)
	}
}

// bannerRow finds the table row of checkout-banner, in JavaScript.
const bannerRow = `[...document.querySelectorAll('td.key')].find(td => td.textContent === 'checkout-banner').parentElement`

// checkRendering checks the page as loaded: no element came from a flag,
// the style sheet applied, and the bars are as wide as the shares.
func checkRendering(t *testing.T, ctx context.Context) {
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil || title != "flagsnap: 5 flags, serving" {
		t.Errorf("title %q, %v", title, err)
	}
	checkNoMarkup(t, ctx)
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('td.key code')].map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if !contains(shown, script) || !contains(shown, img) {
		t.Errorf("the hostile keys are not shown as text: %q", shown)
	}
	// The button's color comes from the style sheet, which the policy
	// allows by its hash: a policy that refused it leaves the default.
	color, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('button[type=submit]')).backgroundColor`))
	if err != nil || color != "rgb(9, 105, 218)" {
		t.Errorf("the style sheet did not apply: button color %q, %v", color, err)
	}
	// checkout-banner's two variants share its 10 evaluations; each bar is
	// as much of its track as its share.
	widths, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[...`+bannerRow+`.querySelectorAll('.fill')].
		map(f => f.getBoundingClientRect().width / f.parentElement.getBoundingClientRect().width)`))
	if err != nil {
		t.Fatal(err)
	}
	counts := printedShares(t, ctx)
	if len(widths) != 2 || len(counts) != 2 || math.Abs(widths[0]-counts[0]) > 0.02 || math.Abs(widths[1]-counts[1]) > 0.02 {
		t.Errorf("bars %v, shares %v", widths, counts)
	}
}

// printedShares reads the shares the page prints beside the bars of
// checkout-banner, as fractions.
func printedShares(t *testing.T, ctx context.Context) []float64 {
	t.Helper()
	texts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...`+bannerRow+`.querySelectorAll('.count')].map(c => c.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for _, s := range texts {
		var n, pct int
		if _, err := fmt.Sscanf(s, "%d · %d%%", &n, &pct); err != nil {
			t.Fatalf("share %q: %v", s, err)
		}
		out = append(out, float64(pct)/100)
	}
	return out
}

// checkNoMarkup checks that nothing from a flag or a request became an
// element: the page has no script and no image at all.
func checkNoMarkup(t *testing.T, ctx context.Context) {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('script, img, iframe, object').length`))
	if err != nil || n != 0 {
		t.Errorf("%d script or image elements, %v", n, err)
	}
}

// submit types values into the fields of the form given by selector (by
// the fields' selectors), clicks its submit button as a person would, and
// returns the status of the page that the submission loads.
func submit(t *testing.T, ctx context.Context, form string, values map[string]string) int64 {
	t.Helper()
	for sel, v := range values {
		// Emptied first, as a person would select what a field holds
		// and type over it.
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(e => { e.value = ""; return true })(document.querySelector(`+quote(sel)+`))`)); err != nil {
			t.Fatalf("emptying %s: %v", sel, err)
		}
		if v == "" {
			continue
		}
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(sel), v)); err != nil {
			t.Fatalf("typing into %s: %v", sel, err)
		}
	}
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(form+` button[type="submit"]`)))
	if err != nil {
		t.Fatalf("submitting %s: %v", form, err)
	}
	return resp.Status
}

// checkTexts checks the text content of elements, by selector.
func checkTexts(t *testing.T, ctx context.Context, want map[string]string) {
	t.Helper()
	for sel, text := range want {
		got, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
		if err != nil || got != text {
			t.Errorf("%s: %q, %v; want %q", sel, got, err, text)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
