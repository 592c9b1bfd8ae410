package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/cucumber/godog"

	"github.com/flagsnap/flagsnap/fractional"
	"github.com/flagsnap/flagsnap/internal/leaktest"
)

// TestMain checks, once every run is over and OpenFeature is shut down,
// that no server, provider, watcher or handler goroutine is left running.
func TestMain(m *testing.M) {
	os.Exit(leaktest.Run(m))
}

// versionExclusions are scenarios whose expectations hold for some
// fractional versions only although they carry no version tag.
//
// @fractional-nested under v1: the "nested if/var expression as variant
// name" outlines expect jon@company.com in the first of two 50/50 buckets
// and user1 in the second. That is true of v2 ((hash*100)>>32 = 36 and 76)
// and v3 (10 and 85), but v1 puts them the other way round:
// murmur3("jon@company.com") = 1557731397 → 72.54%, murmur3("user1") =
// 3305849917 → int32 -989117379 → 46.06%. The other @fractional-nested
// outlines give the same answers in every version, but the tag cannot
// tell them apart.
var versionExclusions = map[fractional.Version][]string{
	fractional.V1: {"~@fractional-nested"},
}

// contradicted are scenarios that the testbed's own data contradicts, so
// no provider can pass both them and the scenarios that replace them.
//
// @no-default: "Resolves flag with no defaultValue correctly" (tagged
// @deprecated, "@no-default-variant should be used instead") expects
// reason ERROR and FLAG_NOT_FOUND for null-default-flag,
// undefined-default-flag and the no-default-flag-* flags, where "Resolves
// flag with no default variant correctly" (@no-default-variant) expects
// reason DEFAULT and no error for the same flags, contexts and defaults.
var contradicted = []string{"~@no-default"}

// tagsFor is the tag expression of one run: the mode's scenarios, without
// the RPC resolver's cache, and only the examples of this fractional
// version.
func tagsFor(m mode, v fractional.Version) string {
	parts := []string{"@" + string(m), "~@caching"}
	for _, other := range []fractional.Version{fractional.V1, fractional.V2, fractional.V3} {
		if other != v {
			parts = append(parts, "~@fractional-"+other.String())
		}
	}
	parts = append(parts, contradicted...)
	parts = append(parts, versionExclusions[v]...)
	return strings.Join(parts, " && ")
}

// suiteRun is one of the six runs of the matrix.
type suiteRun struct {
	mode    mode
	version fractional.Version
	tags    string
	tb      *testbed
	dirs    *scenarioDirs

	mu       sync.Mutex
	outcomes []*outcome
	elapsed  time.Duration
}

func (r *suiteRun) name() string { return string(r.mode) + "/" + r.version.String() }

// outcome is one scenario's result, from the statuses of its steps.
type outcome struct {
	failed, skipped, ran bool
}

func (r *suiteRun) newOutcome() *outcome {
	o := &outcome{}
	r.mu.Lock()
	r.outcomes = append(r.outcomes, o)
	r.mu.Unlock()
	return o
}

func (r *suiteRun) counts() (passed, failed, skipped int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.outcomes {
		switch {
		case o.failed:
			failed++
		case o.skipped || !o.ran:
			skipped++
		default:
			passed++
		}
	}
	return passed, failed, skipped
}

func TestConformance(t *testing.T) {
	tb, err := loadTestbed(findTestbed(t))
	if err != nil {
		t.Fatal(err)
	}
	var runs []*suiteRun
	for _, m := range []mode{modeInProcess, modeFile} {
		for _, v := range []fractional.Version{fractional.V2, fractional.V3, fractional.V1} {
			runs = append(runs, &suiteRun{mode: m, version: v, tags: tagsFor(m, v), tb: tb})
		}
	}
	start := time.Now()
	var done []*suiteRun
	for _, r := range runs {
		// A run left out by -run does not appear in the report.
		ran := false
		t.Run(r.name(), func(t *testing.T) {
			ran = true
			r.execute(t)
		})
		if ran {
			done = append(done, r)
		}
	}
	if len(done) == 0 {
		return
	}

	var table bytes.Buffer
	w := tabwriter.NewWriter(&table, 0, 0, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(w, "run\tpassed\tfailed\tskipped\ttime\t tags")
	total := [3]int{}
	for _, r := range done {
		p, f, s := r.counts()
		total[0], total[1], total[2] = total[0]+p, total[1]+f, total[2]+s
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%v\t %s\n", r.name(), p, f, s, r.elapsed.Round(100*time.Millisecond), r.tags)
	}
	fmt.Fprintf(w, "total\t%d\t%d\t%d\t%v\t\n", total[0], total[1], total[2], time.Since(start).Round(100*time.Millisecond))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	report := fmt.Sprintf("conformance (flagd-testbed %s):\n%s", tb.version(), table.String())
	t.Log(report)
	// go test shows a passing package's log only with -v; CI asks for the
	// table in a file to print it either way.
	if path := os.Getenv("FLAGSNAP_CONFORMANCE_REPORT"); path != "" {
		if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
			t.Errorf("writing the report: %v", err)
		}
	}
}

func (r *suiteRun) execute(t *testing.T) {
	r.dirs = newScenarioDirs(t)
	var out bytes.Buffer
	suite := godog.TestSuite{
		Name: r.name(),
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			s := newScenario(r)
			o := r.newOutcome()
			s.register(sc)
			sc.StepContext().After(func(ctx context.Context, _ *godog.Step, st godog.StepResultStatus, _ error) (context.Context, error) {
				r.mu.Lock()
				defer r.mu.Unlock()
				o.ran = true
				switch st {
				case godog.StepPassed:
				case godog.StepSkipped:
					o.skipped = true
				default: // failed, undefined, pending, ambiguous
					o.failed = true
				}
				return ctx, nil
			})
			// Registered after the scenario's own cleanup hook, so it sees
			// the cleanup's verdict too.
			sc.After(func(ctx context.Context, _ *godog.Scenario, err error) (context.Context, error) {
				if err != nil && !errors.Is(err, godog.ErrSkip) {
					r.mu.Lock()
					o.failed = true
					r.mu.Unlock()
				}
				return ctx, nil
			})
		},
		Options: &godog.Options{
			Format:      "progress",
			Output:      &out,
			NoColors:    true,
			Paths:       []string{r.tb.features},
			Tags:        r.tags,
			Strict:      true,
			Concurrency: 1,
			TestingT:    t,
		},
	}
	start := time.Now()
	status := suite.Run()
	r.elapsed = time.Since(start)

	p, f, s := r.counts()
	t.Logf("%s: %d passed, %d failed, %d skipped in %v; tags %q",
		r.name(), p, f, s, r.elapsed.Round(100*time.Millisecond), r.tags)
	switch {
	case p+f+s == 0:
		t.Errorf("no scenario matched %q", r.tags)
	case status != 0 || f > 0:
		t.Errorf("godog status %d, %d scenarios failed:\n%s", status, f, out.String())
	}
}

// version is the testbed's release, for the report.
func (tb *testbed) version() string {
	b, err := os.ReadFile(filepath.Join(tb.dir, "version.txt"))
	if err != nil {
		return "(unknown version)"
	}
	return strings.TrimSpace(string(b))
}
