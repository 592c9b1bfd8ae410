package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/fractional"
)

// flagdBinEnv names the flagd daemon binary (v0.16) the daemon tests run.
const flagdBinEnv = "FLAGD_BIN"

// daemonContexts are the evaluation contexts every flag is resolved in: the
// attributes the testbed's rules read, present, absent and of other types.
var daemonContexts = []openfeature.FlattenedContext{
	{},
	{"targetingKey": "user-1"},
	{"targetingKey": "jon@company.com", "email": "ballmer@macrosoft.com", "user": map[string]any{"name": "jack"}},
	{"targetingKey": "user-2", "email": "jon@company.com", "color": "yellow", "tier": "premium", "id": 42, "num": 7},
	{"targetingKey": "user-3", "version": "1.2.3", "time": 1, "hashing_input": "abc"},
	{"targetingKey": "user-4", "version": "2.0.0", "id": "x", "user": map[string]any{"name": "queen"}},
	{"targetingKey": "user-5", "version": "v1.10.0-beta", "num": 3.5, "tier": "free", "missing_key": "present"},
	{"targetingKey": "", "version": 2, "email": 17},
}

// ofrepAnswer is flagd's own resolution of a flag over OFREP.
type ofrepAnswer struct {
	Value     any            `json:"value"`
	Variant   string         `json:"variant"`
	Reason    string         `json:"reason"`
	ErrorCode string         `json:"errorCode"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// TestAgainstFlagdDaemon runs the real flagd daemon on the testbed's merged
// flag file and resolves every flag in several contexts three ways: with a
// provider following flagd's sync stream, with a provider reading the file,
// and by asking flagd itself (OFREP). The first two must agree exactly, and
// both must agree with flagd. (The one deliberate difference, an integer
// read of a fractional number, is not exercised: numbers are read as float
// unless every variant is whole.)
func TestAgainstFlagdDaemon(t *testing.T) {
	bin := os.Getenv(flagdBinEnv)
	if bin == "" {
		t.Skipf("%s is not set: no flagd daemon to compare with", flagdBinEnv)
	}
	tb, err := loadTestbed(findTestbed(t))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "flags.json")
	if err := os.WriteFile(path, tb.allFlags, 0o644); err != nil {
		t.Fatal(err)
	}
	d := newFlagd(t, bin, path)
	syncPort, ofrepPort := d.SyncPort, d.OFREPPort

	// flagd v0.16 buckets with the high-precision (v2) fractional.
	common := []flagsnap.Option{flagsnap.WithFractionalVersion(fractional.V2), flagsnap.WithDeadline(5 * time.Second)}
	following := newDaemonProvider(t, append(common, flagsnap.WithResolver(flagsnap.ResolverInProcess),
		flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(syncPort))...)
	fromFile := newDaemonProvider(t, append(common, flagsnap.WithFile(path))...)

	var doc struct {
		Flags map[string]struct {
			Variants map[string]any `json:"variants"`
		} `json:"flags"`
	}
	if err := json.Unmarshal(tb.allFlags, &doc); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(doc.Flags))
	for k := range doc.Flags {
		keys = append(keys, k)
	}
	slices.Sort(keys)

	compared := 0
	for _, key := range keys {
		kind := variantKind(doc.Flags[key].Variants)
		for i, ec := range daemonContexts {
			got := resolveAs(following, kind, key, ec)
			want := resolveAs(fromFile, kind, key, ec)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, context %d: following flagd %+v, from the file %+v", key, i, got, want)
			}
			flagd := askFlagd(t, ofrepPort, key, ec)
			compared++
			if !sameAsFlagd(got, flagd) {
				t.Errorf("%s, context %d %v: flagsnap %+v, flagd %+v", key, i, ec, got, flagd)
			}
		}
	}
	t.Logf("%d evaluations compared with flagd", compared)
}

func newDaemonProvider(t *testing.T, opts ...flagsnap.Option) *flagsnap.Provider {
	t.Helper()
	p, err := flagsnap.NewProvider(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatalf("Init: %v", err)
	}
	return p
}

// variantKind is the OpenFeature type a flag is read as: the type of its
// variants, numbers as int when every one is whole.
func variantKind(variants map[string]any) string {
	kind := ""
	for _, v := range variants {
		k := "object"
		switch n := v.(type) {
		case bool:
			k = "bool"
		case string:
			k = "string"
		case float64:
			k = "int"
			if n != float64(int64(n)) {
				k = "float"
			}
		}
		switch {
		case kind == "":
			kind = k
		case kind == "int" && k == "float", kind == "float" && k == "int":
			kind = "float"
		case kind != k:
			return "object"
		}
	}
	return kind
}

// resolution is what a provider answered, in comparable form.
type resolution struct {
	Value     any
	Variant   string
	Reason    string
	ErrorCode string
	Metadata  map[string]any
}

func resolveAs(p *flagsnap.Provider, kind, key string, ec openfeature.FlattenedContext) resolution {
	ctx := context.Background()
	var value any
	var d openfeature.ProviderResolutionDetail
	switch kind {
	case "bool":
		r := p.BooleanEvaluation(ctx, key, false, ec)
		value, d = r.Value, r.ProviderResolutionDetail
	case "string":
		r := p.StringEvaluation(ctx, key, "", ec)
		value, d = r.Value, r.ProviderResolutionDetail
	case "int":
		r := p.IntEvaluation(ctx, key, 0, ec)
		value, d = float64(r.Value), r.ProviderResolutionDetail
	case "float":
		r := p.FloatEvaluation(ctx, key, 0, ec)
		value, d = r.Value, r.ProviderResolutionDetail
	default:
		r := p.ObjectEvaluation(ctx, key, nil, ec)
		value, d = r.Value, r.ProviderResolutionDetail
	}
	res := resolution{Value: value, Variant: d.Variant, Reason: string(d.Reason), Metadata: map[string]any(d.FlagMetadata)}
	if re := d.ResolutionError; re.Error() != "" {
		res.ErrorCode = strings.SplitN(re.Error(), ":", 2)[0]
	}
	return res
}

func askFlagd(t *testing.T, port int, key string, ec openfeature.FlattenedContext) ofrepAnswer {
	t.Helper()
	body, err := json.Marshal(map[string]any{"context": ec})
	if err != nil {
		t.Fatal(err)
	}
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Post(fmt.Sprintf("http://127.0.0.1:%d/ofrep/v1/evaluate/flags/%s", port, key), "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("asking flagd for %s: %v", key, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var a ofrepAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("flagd's answer for %s: %v: %s", key, err, b)
	}
	return a
}

// sameAsFlagd compares what OFREP carries: value, variant, reason, error
// and metadata.
func sameAsFlagd(got resolution, flagd ofrepAnswer) bool {
	if got.ErrorCode != flagd.ErrorCode || !sameMetadata(got.Metadata, flagd.Metadata) {
		return false
	}
	if flagd.ErrorCode != "" {
		return true // an error carries no value of flagd's to compare
	}
	if got.Reason != flagd.Reason || got.Variant != flagd.Variant {
		return false
	}
	if flagd.Value == nil && flagd.Variant == "" {
		// flagd answers no value where the code default applies (a
		// disabled flag, no default variant): only the caller knows it.
		return true
	}
	return reflect.DeepEqual(normalJSON(got.Value), normalJSON(flagd.Value))
}

// sameMetadata compares flag metadata as JSON, none and empty alike.
func sameMetadata(a, b map[string]any) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	return reflect.DeepEqual(normalJSON(a), normalJSON(b))
}

func normalJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// TestFlagdDaemonGracefulStreamEnds follows the flagd daemon while it may
// end the sync stream in its two orderly ways: its --stream-deadline, and a
// GOAWAY too_many_pings for a client that pings every 10 seconds (grpc-go's
// default enforcement allows one ping in 5 minutes; the GOAWAY would come
// after about 30 seconds, were it not for the liveness check's calls, which
// clear flagd's count of ping strikes). Neither may cause a provider event.
func TestFlagdDaemonGracefulStreamEnds(t *testing.T) {
	bin := os.Getenv(flagdBinEnv)
	if bin == "" {
		t.Skipf("%s is not set: no flagd daemon to compare with", flagdBinEnv)
	}
	path := filepath.Join(t.TempDir(), "flags.json")
	doc := `{"flags": {"f": {"state": "ENABLED", "variants": {"on": true, "off": false}}}}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		flagdArgs []string
		opts      []flagsnap.Option
		watch     time.Duration
	}{
		{"stream deadline", []string{"--stream-deadline", "1s"}, nil, 4 * time.Second},
		{"keepalive enforcement", nil, []flagsnap.Option{flagsnap.WithKeepAlive(10 * time.Second)}, 45 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && c.watch > 10*time.Second {
				t.Skip("takes 45 seconds")
			}
			t.Parallel()
			syncPort := newFlagd(t, bin, path, c.flagdArgs...).SyncPort
			p := newDaemonProvider(t, append([]flagsnap.Option{flagsnap.WithResolver(flagsnap.ResolverInProcess),
				flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(syncPort)}, c.opts...)...)
			select {
			case ev := <-p.EventChannel():
				t.Errorf("event %s %q while flagd ended streams gracefully", ev.EventType, ev.Message)
			case <-time.After(c.watch):
			}
			if r := p.BooleanEvaluation(context.Background(), "f", true, nil); r.Reason != openfeature.DefaultReason || r.Error() != nil {
				t.Errorf("after %v: %+v", c.watch, r.ProviderResolutionDetail)
			}
		})
	}
}
