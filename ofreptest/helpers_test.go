package ofreptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/internal/leaktest"
)

const (
	// testbedEnv names a checkout of flagd's conformance data.
	testbedEnv = "FLAGD_TESTBED_DIR"
	// testbedRepo is where that data is published.
	testbedRepo = "https://github.com/open-feature/flagd-testbed"
	// flagdBinEnv names the flagd daemon binary (v0.16) to compare with.
	flagdBinEnv = "FLAGD_BIN"
	// wait bounds every wait for a process or a server to answer.
	wait = 30 * time.Second
	// requestTimeout bounds each HTTP request.
	requestTimeout = 10 * time.Second
	// missingKey is asked for in every comparison: no document has it.
	missingKey = "no-such-flag"
)

// binDir holds the flagsnap command built for this run.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ofreptest-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := leaktest.Run(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// document is one flag file that both sides of a comparison serve.
type document struct {
	name string
	data []byte
}

// keys are the flag keys of the document, sorted, then missingKey.
func (d document) keys(t *testing.T) []string {
	t.Helper()
	var doc struct {
		Flags map[string]json.RawMessage `json:"flags"`
	}
	if err := json.Unmarshal(d.data, &doc); err != nil {
		t.Fatalf("%s: %v", d.name, err)
	}
	keys := make([]string, 0, len(doc.Flags)+1)
	for k := range doc.Flags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return append(keys, missingKey)
}

// write stores the document as a file of a temporary directory of t.
func (d document) write(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "flags.json")
	if err := os.WriteFile(path, d.data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ownDocuments are the flag files of testdata/: flags.json (targeting of
// every kind, objects, numbers, disabled flags, flags without a default
// variant, rules that fail), three files of good flags beside a broken one
// (broken.json: a default variant that is not a variant; mixed-types.json;
// out-of-range.json: a number past float64), and flagd-differences.json
// (the flags that docs/targeting.md says flagsnap answers otherwise than
// flagd).
func ownDocuments(t *testing.T) []document {
	t.Helper()
	var docs []document
	for _, name := range []string{"flags.json", "broken.json", "mixed-types.json", "out-of-range.json", "flagd-differences.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, document{name: strings.TrimSuffix(name, ".json"), data: b})
	}
	return docs
}

// testbedDocuments are flagd's conformance flag files: every flags/*.json
// but the selector ones merged into one document, as flagd's test harness
// serves them (zero-flags.json uses an evaluator of evaluator-refs.json),
// and each selector file on its own. Without the testbed the test is
// skipped, saying where it looked; a FLAGD_TESTBED_DIR that names no
// testbed fails, so that a typo cannot turn the comparison off.
func testbedDocuments(t *testing.T) []document {
	t.Helper()
	dir := os.Getenv(testbedEnv)
	if dir != "" {
		abs, err := filepath.Abs(dir) // go test runs in this module's directory
		if err != nil {
			t.Fatal(err)
		}
		if !isDir(filepath.Join(abs, "flags")) {
			t.Fatalf("%s=%s: no flags/ directory in %s: not a flagd-testbed checkout", testbedEnv, dir, abs)
		}
		dir = abs
	} else {
		abs, err := filepath.Abs(filepath.Join("..", "..", "shared", "flagd-testbed"))
		if err != nil {
			t.Fatal(err)
		}
		if !isDir(filepath.Join(abs, "flags")) {
			t.Skipf("flagd's conformance data not found at %s: set %s to a checkout of %s to compare on it", abs, testbedEnv, testbedRepo)
		}
		dir = abs
	}
	files, err := filepath.Glob(filepath.Join(dir, "flags", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	var merged, selectors []document
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d := document{name: strings.TrimSuffix(filepath.Base(f), ".json"), data: b}
		if strings.HasPrefix(d.name, "selector-") {
			selectors = append(selectors, d)
		} else {
			merged = append(merged, d)
		}
	}
	if len(merged) == 0 {
		t.Fatalf("no flag files in %s", filepath.Join(dir, "flags"))
	}
	all, err := mergeDocuments(merged)
	if err != nil {
		t.Fatal(err)
	}
	return append([]document{{name: "testbed-all", data: all}}, selectors...)
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// mergeDocuments joins flag documents into one: their flags, $evaluators
// and metadata by key, a later document's entry replacing an earlier one's.
// Each entry is copied byte for byte, so that what the files test of the
// parser (whitespace inside a $ref, for one) reaches the servers.
func mergeDocuments(docs []document) ([]byte, error) {
	sections := map[string]map[string]json.RawMessage{}
	order := map[string][]string{}
	for _, d := range docs {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(d.data, &top); err != nil {
			return nil, fmt.Errorf("%s: %v", d.name, err)
		}
		for _, section := range []string{"flags", "$evaluators", "metadata"} {
			raw, ok := top[section]
			if !ok {
				continue
			}
			var entries map[string]json.RawMessage
			if err := json.Unmarshal(raw, &entries); err != nil {
				return nil, fmt.Errorf("%s: %s: %v", d.name, section, err)
			}
			if sections[section] == nil {
				sections[section] = map[string]json.RawMessage{}
			}
			for k, v := range entries {
				if _, seen := sections[section][k]; !seen {
					order[section] = append(order[section], k)
				}
				sections[section][k] = v
			}
		}
	}
	var b bytes.Buffer
	b.WriteString("{")
	first := true
	for _, section := range []string{"flags", "$evaluators", "metadata"} {
		if sections[section] == nil {
			continue
		}
		if !first {
			b.WriteString(",")
		}
		first = false
		fmt.Fprintf(&b, "\n%q: {", section)
		for i, k := range order[section] {
			if i > 0 {
				b.WriteString(",")
			}
			name, _ := json.Marshal(k)
			fmt.Fprintf(&b, "\n  %s: %s", name, sections[section][k])
		}
		b.WriteString("\n}")
	}
	b.WriteString("\n}\n")
	if !json.Valid(b.Bytes()) {
		return nil, errors.New("the merged document is not valid JSON")
	}
	return b.Bytes(), nil
}

// contexts are the evaluation contexts every flag is resolved in: the
// attributes the rules of the testbed and of testdata/ read (targeting
// keys, emails, versions, tiers, colours, numbers), present, absent, of
// other types, and targeting keys enough to land in every bucket of the
// fractional rules.
var contexts = func() []openfeature.FlattenedContext {
	cs := []openfeature.FlattenedContext{
		{},
		{"targetingKey": "user-1"},
		{"targetingKey": "user-2", "email": "ada@example.com"},
		{"targetingKey": "partner-acme", "email": "ops@acme.org", "tier": "premium"},
		{"targetingKey": "5c3d8535-f81a-4478-a6d3-afaa4d51199e"},
		{"targetingKey": "jon@company.com", "email": "ballmer@macrosoft.com", "user": map[string]any{"name": "jack"}},
		{"email": "jobs@orange.com"},
		{"email": "beta-tester@example.com", "locale": "en-GB"},
		{"targetingKey": "ceo", "email": "ceo@example.com", "locale": "mute", "prefers": "dark"},
		{"email": "dev@flagsnap.dev", "prefers": "none", "orders": 150},
		{"targetingKey": "user-3", "version": "1.2.3", "time": 1, "hashing_input": "abc"},
		{"targetingKey": "user-4", "version": "2.0.0", "id": "abcxyz", "user": map[string]any{"name": "queen"}},
		{"targetingKey": "user-5", "version": "v1.10.0-beta", "num": 3.5, "tier": "free", "missing_key": "present"},
		{"targetingKey": "user-6", "version": "3.1.0", "id": "123xyz", "tier": "banned", "orders": 12},
		{"targetingKey": "user-7", "version": "1.0.0+build", "id": "4563", "tier": "debt", "orders": -1},
		{"targetingKey": "user-8", "version": "v1.0.0", "tier": "internal", "color": "red"},
		{"targetingKey": "user-9", "version": "1", "color": "green", "tier": "premium"},
		{"targetingKey": "user-10", "version": 1.5},
		{"targetingKey": "user-11", "version": "2.0.0.0", "color": "purple"},
		{"targetingKey": "user-12", "version": "3.0.5", "locale": "de-DE", "orders": 10},
		{"targetingKey": "user-13", "version": "not-a-version", "email": "beta-@example.org"},
		{"targetingKey": "", "version": 2, "email": 17},
		{"fn": "Sulisław", "ln": "Świętopełk", "age": 29, "customer": false},
		{"fn": "Sulisław", "ln": "Świętopełk", "age": 29, "customer": "false"},
		{"injectedmetadata": "set", "time": 9999999999},
		{"color": "yellow", "tier": "premium", "id": 42},
		{"num": "abc-def", "id": 3},
		{"user": map[string]any{"name": "king"}, "hashing_input": "xyz"},
		{"targetingKey": "user-14", "plan": "x"},
		{"targetingKey": "user-15", "plan": map[string]any{"ab": 1}},
		{"targetingKey": "user-16", "plan": "nope", "groups": []any{"g1", "g2"}},
		{"targetingKey": "user-17", "groups": []any{}, "tier": "premium"},
		{"targetingKey": "ünïcødé-ключ", "email": "ÄDA@EXAMPLE.COM"},
	}
	for i := range 12 {
		c := openfeature.FlattenedContext{
			"targetingKey":  "tk-" + strconv.Itoa(i),
			"email":         fmt.Sprintf("person%d@example.com", i),
			"user":          map[string]any{"name": fmt.Sprintf("player-%d", i)},
			"hashing_input": strconv.Itoa(i * 7919),
		}
		if i%3 == 0 {
			c["groups"] = []any{"staff", "beta"}
		}
		cs = append(cs, c)
	}
	return cs
}()

// canonicalJSON is v as compact JSON with sorted keys and numbers in one
// spelling (a whole number as an integer, any other as the shortest float),
// so that 1, 1.0 and an int64 1 compare equal and 9007199254740993 does
// not equal 9007199254740992. A nil v is "".
func canonicalJSON(v any) string {
	if v == nil {
		return ""
	}
	b, ok := v.([]byte)
	if !ok {
		if raw, isRaw := v.(json.RawMessage); isRaw {
			b = raw
		} else {
			var err error
			if b, err = json.Marshal(v); err != nil {
				return fmt.Sprintf("<%v: %v>", v, err)
			}
		}
	}
	if len(b) == 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return fmt.Sprintf("<%s: %v>", b, err)
	}
	out, err := json.Marshal(canonicalNumbers(x))
	if err != nil {
		return fmt.Sprintf("<%s: %v>", b, err)
	}
	return string(out)
}

func canonicalNumbers(x any) any {
	switch v := x.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return json.Number(strconv.FormatInt(i, 10))
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return v
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
			return json.Number(strconv.FormatInt(int64(f), 10))
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	case map[string]any:
		for k, e := range v {
			v[k] = canonicalNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = canonicalNumbers(e)
		}
	}
	return x
}

// newClient is an HTTP client of the test's own, whose idle connections
// are closed when the test ends so that no goroutine outlives it.
func newClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: requestTimeout}
}

// newProvider is an initialised in-process provider, shut down when the
// test ends.
func newProvider(t *testing.T, opts ...flagsnap.Option) *flagsnap.Provider {
	t.Helper()
	p, err := flagsnap.NewProvider(append([]flagsnap.Option{flagsnap.WithoutEnv(), flagsnap.WithDeadline(wait)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatalf("Init: %v", err)
	}
	return p
}

var (
	buildOnce sync.Once
	buildErr  error
)

// flagsnapBinary builds the flagsnap command from ../cmd/flagsnap, once
// per test run.
func flagsnapBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the flagsnap command")
	}
	bin := filepath.Join(binDir, "flagsnap")
	buildOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
		cmd.Dir = filepath.Join("..", "cmd", "flagsnap")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build in %s: %v\n%s", cmd.Dir, err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

// postJSON posts body as JSON to url and returns the answer's status and
// body.
func postJSON(ctx context.Context, client *http.Client, url string, body any, header http.Header) (int, http.Header, []byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, nil, err
	}
	return postBytes(ctx, client, url, b, header)
}

// postBytes posts body, as it is, to url as JSON and returns the answer's
// status and body.
func postBytes(ctx context.Context, client *http.Client, url string, body []byte, header http.Header) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp.StatusCode, resp.Header, out, err
}

// ofrepReady is true once the OFREP server at base answers a bulk
// evaluation with 200 (before its first flag set, flagsnap answers 503).
func ofrepReady(client *http.Client, base string) func() bool {
	return func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		status, _, _, err := postJSON(ctx, client, base+"/ofrep/v1/evaluate/flags", map[string]any{"context": map[string]any{}}, nil)
		return err == nil && status == http.StatusOK
	}
}
