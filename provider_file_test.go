package flagsnap

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fileProvider starts a provider on path; Init's error is returned, not
// fatal, for the tests about failing starts.
func fileProvider(t *testing.T, path string, opts ...Option) (*Provider, events, error) {
	t.Helper()
	p, err := NewProvider(append([]Option{WithFile(path), WithFilePollInterval(200 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	err = p.Init(openfeature.EvaluationContext{})
	return p, events{t: t, ch: p.EventChannel()}, err
}

func color(p *Provider) string {
	return p.StringEvaluation(context.Background(), "color", "none", nil).Value
}

// eventually polls cond until it holds, for at most 5s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestFileInPlaceWriteAndRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "flags.json")
	writeFile(t, path, flagsV1)
	p, ev, err := fileProvider(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if c := color(p); c != "red" {
		t.Fatalf("color %q", c)
	}
	writeFile(t, path, flagsV2)
	if e := ev.next(); e.EventType != openfeature.ProviderConfigChange || len(e.FlagChanges) != 3 {
		t.Fatalf("in-place write: %s %v", e.EventType, e.FlagChanges)
	}
	if c := color(p); c != "blue" {
		t.Fatalf("color %q after the write", c)
	}
	// An editor's save: write a temporary file, rename it over the flags.
	tmp := filepath.Join(dir, ".flags.json.swp")
	writeFile(t, tmp, flagsV1)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if e := ev.next(); e.EventType != openfeature.ProviderConfigChange || len(e.FlagChanges) != 3 {
		t.Fatalf("rename: %s %v", e.EventType, e.FlagChanges)
	}
	if c := color(p); c != "red" {
		t.Fatalf("color %q after the rename", c)
	}
}

func TestFileHalfWrittenIsNeverAccepted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, flagsV1)
	p, ev, err := fileProvider(t, path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	half := len(flagsV2) / 2
	if _, err := f.WriteString(flagsV2[:half]); err != nil {
		t.Fatal(err)
	}
	f.Sync()
	// The writer pauses long enough for the half to be read.
	e := ev.next()
	if e.EventType != openfeature.ProviderError || e.ErrorCode != openfeature.ParseErrorCode {
		t.Fatalf("half a file: %s %s %q", e.EventType, e.ErrorCode, e.Message)
	}
	if c := color(p); c != "red" {
		t.Fatalf("half a file replaced the flags: color %q", c)
	}
	if _, err := f.WriteString(flagsV2[half:]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ev.recovered("color", "limit", "old")
	if c := color(p); c != "blue" {
		t.Fatalf("color %q", c)
	}
}

func TestFileConfigMapSwap(t *testing.T) {
	dir := t.TempDir()
	mustDo := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// The layout of a Kubernetes ConfigMap volume.
	mustDo(os.Mkdir(filepath.Join(dir, "..2026_11_22_10_00_00.1"), 0o755))
	writeFile(t, filepath.Join(dir, "..2026_11_22_10_00_00.1", "flags.json"), flagsV1)
	mustDo(os.Symlink("..2026_11_22_10_00_00.1", filepath.Join(dir, "..data")))
	mustDo(os.Symlink("..data/flags.json", filepath.Join(dir, "flags.json")))
	p, ev, err := fileProvider(t, filepath.Join(dir, "flags.json"))
	mustDo(err)

	// The kubelet's update: a new directory, a new link, renamed over ..data.
	mustDo(os.Mkdir(filepath.Join(dir, "..2026_11_22_10_05_00.2"), 0o755))
	writeFile(t, filepath.Join(dir, "..2026_11_22_10_05_00.2", "flags.json"), flagsV2)
	mustDo(os.Symlink("..2026_11_22_10_05_00.2", filepath.Join(dir, "..data_tmp")))
	mustDo(os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	mustDo(os.RemoveAll(filepath.Join(dir, "..2026_11_22_10_00_00.1")))

	if e := ev.next(); e.EventType != openfeature.ProviderConfigChange || len(e.FlagChanges) != 3 {
		t.Fatalf("ConfigMap swap: %s %v", e.EventType, e.FlagChanges)
	}
	if c := color(p); c != "blue" {
		t.Fatalf("color %q", c)
	}
	ev.none(100 * time.Millisecond) // no STALE: the file never went missing
}

func TestFileDeletedThenRecreated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, flagsV1)
	p, ev, err := fileProvider(t, path, WithRetryGracePeriod(150*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if e := ev.next(); e.EventType != openfeature.ProviderStale {
		t.Fatalf("deleted: %s", e.EventType)
	}
	if e := ev.next(); e.EventType != openfeature.ProviderError || !containsAll(e.Message, "grace period", "flags.json") {
		t.Fatalf("after the grace period: %s %q", e.EventType, e.Message)
	}
	if c := color(p); c != "red" {
		t.Fatalf("the last flags are not served while the file is gone: %q", c)
	}
	writeFile(t, path, flagsV2)
	ev.recovered("color", "limit", "old")
	if c := color(p); c != "blue" {
		t.Fatalf("color %q", c)
	}
}

// failingInitDeadline is the Init deadline of the tests whose source never
// delivers: Init's error carries the source's reason only if the source
// has reported it before the deadline, which under the race detector on a
// busy machine can take well over 50ms.
const failingInitDeadline = time.Second

func TestFileMissingAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	start := time.Now()
	p, ev, err := fileProvider(t, path, WithDeadline(failingInitDeadline))
	if err == nil || !containsAll(err.Error(), "no flags within "+failingInitDeadline.String(), "flags.json", "no such file") {
		t.Fatalf("Init: %v", err)
	}
	if d := time.Since(start); d < failingInitDeadline {
		t.Errorf("Init failed after %v, before the deadline", d)
	}
	if v := p.StringEvaluation(context.Background(), "color", "none", nil); v.ResolutionDetail().ErrorCode != openfeature.ProviderNotReadyCode {
		t.Errorf("before any flags: %+v", v)
	}
	writeFile(t, path, flagsV1)
	ev.recovered("beta", "color", "old")
	if c := color(p); c != "red" {
		t.Fatalf("color %q", c)
	}
}

func TestFileThatCannotBeRead(t *testing.T) {
	t.Run("directory", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		_, _, err := fileProvider(t, dir, WithDeadline(failingInitDeadline))
		if err == nil || !strings.Contains(err.Error(), "is a directory") {
			t.Fatalf("Init: %v", err)
		}
	})
	t.Run("permission denied", func(t *testing.T) {
		t.Parallel()
		if os.Geteuid() == 0 {
			t.Skip("root reads files whatever their permissions")
		}
		path := filepath.Join(t.TempDir(), "flags.json")
		writeFile(t, path, flagsV1)
		if err := os.Chmod(path, 0); err != nil {
			t.Fatal(err)
		}
		_, _, err := fileProvider(t, path, WithDeadline(failingInitDeadline))
		if err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Fatalf("Init: %v", err)
		}
	})
	t.Run("bad flags at start", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "flags.json")
		writeFile(t, path, `{"flags": [}`)
		_, _, err := fileProvider(t, path, WithDeadline(failingInitDeadline))
		if err == nil || !containsAll(err.Error(), "line 1", "column 12") {
			t.Fatalf("Init: %v", err)
		}
	})
}

// versioned is a flag file whose rule and variants both carry n: a rule of
// one version with the variants of another would name a variant that does
// not exist.
func versioned(n int) string {
	return fmt.Sprintf(`{"flags": {
	  "version": {"state": "ENABLED", "variants": {"v%[1]d": "%[1]d", "x%[1]d": "never"}, "defaultVariant": "x%[1]d",
	              "targeting": {"if": [{"==": [{"var": "k"}, "key"]}, "v%[1]d", "x%[1]d"]}},
	  "same":    {"state": "ENABLED", "variants": {"n": %[1]d}, "defaultVariant": "n"}
	}}`, n)
}

func TestConcurrentEvaluationsSeeWholeFlagSets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, versioned(0))
	p, _, err := fileProvider(t, path)
	if err != nil {
		t.Fatal(err)
	}
	const rewrites = 200
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	var evaluations atomic.Int64
	ctx := context.Background()
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := -1
			for n := 0; !stop.Load() && n < 10_000_000; n++ {
				d := p.StringEvaluation(ctx, "version", "", openfeature.FlattenedContext{"k": "key"})
				if d.ResolutionError != (openfeature.ResolutionError{}) || d.Variant != "v"+d.Value {
					errs <- fmt.Errorf("goroutine %d: a mixed or broken flag set: %+v", g, d)
					return
				}
				v, _ := strconv.Atoi(d.Value)
				if v < last {
					errs <- fmt.Errorf("goroutine %d: version went back from %d to %d", g, last, v)
					return
				}
				last = v
				evaluations.Add(1)
				if n%64 == 0 {
					runtime.Gosched() // let the writer and the file source in
				}
			}
		}()
	}
	for n := 1; n <= rewrites; n++ {
		writeFile(t, path, versioned(n))
		time.Sleep(time.Millisecond)
	}
	eventually(t, "the last version is served", func() bool {
		return p.StringEvaluation(ctx, "version", "", openfeature.FlattenedContext{"k": "key"}).Value == strconv.Itoa(rewrites)
	})
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if evaluations.Load() == 0 {
		t.Fatal("no evaluation ran")
	}
	if n := p.IntEvaluation(ctx, "same", -1, nil).Value; n != rewrites {
		t.Errorf("the other flag is at version %d", n)
	}
}

func TestFileProviderThroughOpenFeature(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, flagsV1)
	p, err := NewProvider(WithFile(path))
	if err != nil {
		t.Fatal(err)
	}
	domain := t.Name()
	if err := openfeature.SetNamedProviderAndWait(domain, p); err != nil {
		t.Fatal(err)
	}
	client := openfeature.NewClient(domain)
	changes := make(chan openfeature.EventDetails, 4)
	onChange := func(d openfeature.EventDetails) { changes <- d }
	client.AddHandler(openfeature.ProviderConfigChange, &onChange)
	if client.State() != openfeature.ReadyState {
		t.Fatalf("state %s", client.State())
	}
	writeFile(t, path, flagsV2)
	select {
	case d := <-changes:
		if len(d.FlagChanges) != 3 {
			t.Errorf("changes %v", d.FlagChanges)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no change event")
	}
	v, err := client.StringValue(context.Background(), "color", "none", openfeature.EvaluationContext{})
	if err != nil || v != "blue" {
		t.Fatalf("%q %v", v, err)
	}
	// Replacing the provider shuts this one down.
	if err := openfeature.SetNamedProviderAndWait(domain, openfeature.NoopProvider{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the provider is shut down", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.run == nil
	})
}
