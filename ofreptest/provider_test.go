package ofreptest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk-contrib/providers/ofrep"
	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/internal/flagdtest"
	"github.com/flagsnap/flagsnap/internal/loopback"
)

// method is one of OpenFeature's typed evaluations.
type method string

const (
	boolean method = "Boolean"
	text    method = "String"
	integer method = "Int"
	number  method = "Float"
	object  method = "Object"
)

// methods are asked for every flag: the one that fits its variants and
// the others, which must fail the same way on both sides.
var methods = []method{boolean, text, integer, number, object}

// codeDefault is the default each method is called with: values no flag
// serves, so that the code default is told apart from a variant.
func codeDefault(m method) any {
	switch m {
	case boolean:
		return true
	case text:
		return "code-default"
	case integer:
		return int64(-999)
	case number:
		return -9.5
	default:
		return map[string]any{"code-default": true}
	}
}

// resolution is a provider's answer to one typed evaluation, comparable
// with ==.
type resolution struct {
	Value     string // canonical JSON (canonicalJSON); "" for a nil value
	Variant   string
	Reason    string
	ErrorCode string
	Metadata  string // canonical JSON of the flag metadata; "{}" when none
}

func resolve(p openfeature.FeatureProvider, m method, key string, ec openfeature.FlattenedContext) resolution {
	ctx := context.Background()
	var value any
	var d openfeature.ProviderResolutionDetail
	switch m {
	case boolean:
		r := p.BooleanEvaluation(ctx, key, codeDefault(m).(bool), ec)
		value, d = r.Value, r.ProviderResolutionDetail
	case text:
		r := p.StringEvaluation(ctx, key, codeDefault(m).(string), ec)
		value, d = r.Value, r.ProviderResolutionDetail
	case integer:
		r := p.IntEvaluation(ctx, key, codeDefault(m).(int64), ec)
		value, d = r.Value, r.ProviderResolutionDetail
	case number:
		r := p.FloatEvaluation(ctx, key, codeDefault(m).(float64), ec)
		value, d = r.Value, r.ProviderResolutionDetail
	default:
		r := p.ObjectEvaluation(ctx, key, codeDefault(m), ec)
		value, d = r.Value, r.ProviderResolutionDetail
	}
	rd := d.ResolutionDetail()
	return resolution{
		Value:     canonicalJSON(value),
		Variant:   rd.Variant,
		Reason:    string(rd.Reason),
		ErrorCode: string(rd.ErrorCode),
		Metadata:  canonicalJSON(map[string]any(rd.FlagMetadata)),
	}
}

// overOFREP is a way in which OpenFeature's Go OFREP provider (v0.1.7)
// answers otherwise than the in-process provider on the same flags, for a
// reason of the protocol or of that provider, not of flagsnap's server.
type overOFREP struct {
	name string
	// applies says whether the difference concerns evaluation m of a flag
	// whose in-process answers, for every method, are local.
	applies func(m method, local map[method]resolution) bool
	// expect turns want, the answer expected so far, into what the OFREP
	// provider answers.
	expect func(m method, local map[method]resolution, want resolution) resolution
}

// ofrepProviderDifferences are all the expected differences, applied in
// order; an answer they do not change must be the in-process one exactly.
var ofrepProviderDifferences = []overOFREP{
	{
		// OFREP's ADR 0006: when a flag has no variant to serve (no default
		// variant, and no rule picked one), the server answers without a
		// value, reason DEFAULT, so that the caller's code default applies,
		// as the in-process provider does. The OFREP provider v0.1.7
		// predates that: its Boolean, String, Int and Float evaluations check
		// the type of the missing value and answer TYPE_MISMATCH (with no
		// variant and no metadata, as every error of its own); its Object
		// evaluation checks nothing and answers a nil value, reason DEFAULT,
		// instead of the code default.
		name: "a code default (no value, ADR 0006) is read as a value",
		applies: func(m method, local map[method]resolution) bool {
			l := local[m]
			return l.ErrorCode == "" && l.Reason == string(openfeature.DefaultReason) && l.Variant == ""
		},
		expect: func(m method, _ map[method]resolution, want resolution) resolution {
			if m == object {
				want.Value = ""
				return want
			}
			return resolution{Value: canonicalJSON(codeDefault(m)), Reason: string(openfeature.ErrorReason),
				ErrorCode: string(openfeature.TypeMismatchCode), Metadata: "{}"}
		},
	},
	{
		// OFREP carries no type (ADR 0003): the client checks the value it
		// is sent. The OFREP provider's check fails with an error of its
		// own, which has neither the variant nor the flag's metadata that
		// the in-process TYPE_MISMATCH keeps.
		name: "a type mismatch is found by the client, without variant or metadata",
		applies: func(m method, local map[method]resolution) bool {
			return m != object && local[m].ErrorCode == string(openfeature.TypeMismatchCode)
		},
		expect: func(_ method, _ map[method]resolution, want resolution) resolution {
			want.Variant, want.Metadata = "", "{}"
			return want
		},
	},
	{
		// The OFREP provider's Object evaluation (v0.1.7) accepts any JSON
		// value: a boolean, string or number variant is answered as the
		// object, with the server's variant, reason and metadata, where the
		// in-process provider answers TYPE_MISMATCH. (It is the value the
		// other methods answer.)
		name: "Object accepts a variant that is not an object",
		applies: func(m method, local map[method]resolution) bool {
			_, ok := servedScalar(local)
			return m == object && local[m].ErrorCode == string(openfeature.TypeMismatchCode) && ok
		},
		expect: func(_ method, local map[method]resolution, _ resolution) resolution {
			served, _ := servedScalar(local)
			return served
		},
	},
	{
		// The OFREP provider builds the errors the server sends (400, 404)
		// from their code and details alone: it does not read the metadata
		// that flagsnap's error answers carry, as the in-process provider
		// gives it.
		name: "errors sent by the server lose the flag's metadata",
		applies: func(m method, local map[method]resolution) bool {
			c := local[m].ErrorCode
			return c != "" && c != string(openfeature.TypeMismatchCode)
		},
		expect: func(_ method, _ map[method]resolution, want resolution) resolution {
			want.Metadata = "{}"
			return want
		},
	},
	{
		// The OFREP provider (v0.1.7) knows four codes in a 400 answer:
		// PARSE_ERROR, TARGETING_KEY_MISSING, INVALID_CONTEXT and GENERAL;
		// it reads any other as GENERAL. FLAG_NOT_FOUND comes as a 404, and
		// TYPE_MISMATCH is never the server's (it does not know the type
		// asked for), so no flag of the test files reaches this today.
		name: "400 codes the OFREP provider does not know become GENERAL",
		applies: func(m method, local map[method]resolution) bool {
			switch openfeature.ErrorCode(local[m].ErrorCode) {
			case "", openfeature.ParseErrorCode, openfeature.TargetingKeyMissingCode, openfeature.InvalidContextCode,
				openfeature.GeneralCode, openfeature.FlagNotFoundCode, openfeature.TypeMismatchCode:
				return false
			}
			return true
		},
		expect: func(_ method, _ map[method]resolution, want resolution) resolution {
			want.ErrorCode = string(openfeature.GeneralCode)
			return want
		},
	},
}

// servedScalar is the in-process answer of the method that fits a flag
// whose variant is a boolean, a string or a number.
func servedScalar(local map[method]resolution) (resolution, bool) {
	for _, m := range []method{boolean, text, number} {
		if r := local[m]; r.ErrorCode == "" && r.Value != "" {
			return r, true
		}
	}
	return resolution{}, false
}

// expectedOverOFREP is what the OFREP provider must answer for evaluation
// m, given the in-process answers local; used counts the differences
// applied.
func expectedOverOFREP(m method, local map[method]resolution, used []int) resolution {
	want := local[m]
	for i, d := range ofrepProviderDifferences {
		if d.applies(m, local) {
			want = d.expect(m, local, want)
			used[i]++
		}
	}
	return want
}

// maxReported bounds the differences reported for one document.
const maxReported = 30

// compareOverOFREP resolves every flag of doc (and a missing one) in every
// context with every method, through the OFREP provider pointed at base
// and with local, an in-process provider on the same flags.
func compareOverOFREP(t *testing.T, doc document, base string, local *flagsnap.Provider) {
	t.Helper()
	client := newClient(t)
	remote := ofrep.NewProvider(base, ofrep.WithClient(client))
	used := make([]int, len(ofrepProviderDifferences))
	compared, failed := 0, 0
	for _, key := range doc.keys(t) {
		for i, ec := range contexts {
			locals := make(map[method]resolution, len(methods))
			for _, m := range methods {
				locals[m] = resolve(local, m, key, ec)
			}
			for _, m := range methods {
				want := expectedOverOFREP(m, locals, used)
				got := resolve(remote, m, key, ec)
				compared++
				if got == want {
					continue
				}
				t.Errorf("%s: %s(%q), context %d %v:\n  OFREP provider %+v\n  expected       %+v\n  in-process     %+v",
					doc.name, m, key, i, ec, got, want, locals[m])
				if failed++; failed == maxReported {
					t.Fatalf("%s: stopping after %d differences", doc.name, failed)
				}
			}
		}
	}
	t.Logf("%s: %d evaluations compared", doc.name, compared)
	for i, d := range ofrepProviderDifferences {
		t.Logf("%s: expected difference %q: %d evaluations", doc.name, d.name, used[i])
	}
}

// forEachDocument runs check on every document, each in a parallel
// subtest: the files of testdata/, then flagd's conformance files (under
// a subtest that is skipped, saying why, when they are absent).
func forEachDocument(t *testing.T, check func(t *testing.T, doc document)) {
	t.Helper()
	for _, doc := range ownDocuments(t) {
		t.Run(doc.name, func(t *testing.T) {
			t.Parallel()
			check(t, doc)
		})
	}
	t.Run("flagd-testbed", func(t *testing.T) {
		for _, doc := range testbedDocuments(t) {
			t.Run(doc.name, func(t *testing.T) {
				t.Parallel()
				check(t, doc)
			})
		}
	})
}

// ofrepServer serves p's OFREP handler on loopback until the test ends,
// mounted as the documentation says, and returns its base URL.
func ofrepServer(t *testing.T, p *flagsnap.Provider, opts ...flagsnap.OFREPOption) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/ofrep/", flagsnap.OFREPHandler(p, opts...))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestOFREPProviderAgainstHandler points OpenFeature's Go OFREP provider at
// flagsnap.OFREPHandler and compares each of its answers with an
// in-process provider's on the same flags.
func TestOFREPProviderAgainstHandler(t *testing.T) {
	forEachDocument(t, func(t *testing.T, doc document) {
		served := newProvider(t, flagsnap.WithFlags(doc.data))
		base := ofrepServer(t, served)
		local := newProvider(t, flagsnap.WithFlags(doc.data))
		compareOverOFREP(t, doc, base, local)
	})
}

// TestOFREPProviderAgainstServe points OpenFeature's Go OFREP provider at
// `flagsnap serve FILE --http ADDR`, run as a process, and compares each
// of its answers with an in-process provider following its sync port.
func TestOFREPProviderAgainstServe(t *testing.T) {
	bin := flagsnapBinary(t)
	forEachDocument(t, func(t *testing.T, doc document) {
		path := doc.write(t)
		if want, ok := serveRefuses[doc.name]; ok {
			expectServeRefusal(t, bin, path, want)
			return
		}
		base, syncPort := startServe(t, bin, path)
		// serve reads a file as flagd does and serves what flagd would
		// send over sync (a number such as 9007199254740993 already a
		// float): its OFREP answers are those of an in-process provider
		// following its sync port.
		local := newProvider(t, flagsnap.WithResolver(flagsnap.ResolverInProcess), flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(syncPort))
		compareOverOFREP(t, doc, base, local)
	})
}

// serveRefuses are the documents `flagsnap serve` refuses to start with,
// and what its message must name. Its sync server reads a file as flagd
// does, and flagd refuses a whole file that holds a number past float64's
// range (docs/targeting.md, "A number out of range"), where the library's
// provider refuses only the flag that holds it: TestOFREPProviderAgainstHandler
// compares the other flags of the same file.
var serveRefuses = map[string]string{"out-of-range": "1e400"}

// expectServeRefusal runs `flagsnap serve path --http` and expects it to
// end at once, with an error naming want.
func expectServeRefusal(t *testing.T, bin, path, want string) {
	t.Helper()
	ports := loopback.FreePorts(t, 2)
	p := flagdtest.StartProcess(t, "flagsnap serve", "", bin, "serve", path,
		"--addr", fmt.Sprintf("127.0.0.1:%d", ports[0]),
		"--http", fmt.Sprintf("127.0.0.1:%d", ports[1]))
	select {
	case <-p.Exited():
	case <-time.After(wait):
		t.Fatalf("flagsnap serve %s still runs after %v; want it refused, naming %s", path, wait, want)
	}
	if p.State().Success() {
		t.Errorf("flagsnap serve %s ended with success; want an error naming %s", path, want)
	}
	if out := p.Output(); !strings.Contains(out, want) {
		t.Errorf("flagsnap serve %s said %q; want it to name %s", path, out, want)
	}
}

// startServe runs `flagsnap serve path --http` on loopback ports until the
// test ends, and returns the base URL of its OFREP service once it
// answers, and its sync port.
func startServe(t *testing.T, bin, path string, args ...string) (string, int) {
	t.Helper()
	ports := loopback.FreePorts(t, 2)
	args = append([]string{"serve", path,
		"--addr", fmt.Sprintf("127.0.0.1:%d", ports[0]),
		"--http", fmt.Sprintf("127.0.0.1:%d", ports[1])}, args...)
	p := flagdtest.StartProcess(t, "flagsnap serve", "", bin, args...)
	base := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	p.WaitUntil(t, wait, ofrepReady(newClient(t), base))
	return base, ports[0]
}
