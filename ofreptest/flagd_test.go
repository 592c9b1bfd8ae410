package ofreptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/fractional"
	"github.com/flagsnap/flagsnap/internal/flagdtest"
)

// wireAnswer is a server's OFREP answer for one flag, as sent: the fields
// flagsnap and flagd must agree on.
type wireAnswer struct {
	// Status is the HTTP status of a single evaluation, 200 for an item of
	// a bulk answer, and 0 for a flag that a bulk answer does not list.
	Status    int
	Key       string
	Value     string // canonical JSON (canonicalJSON); "" when absent
	Variant   string
	Reason    string
	ErrorCode string
	Metadata  string // canonical JSON; "" when absent or empty
}

// wireFields is the JSON of one flag's answer, single or in a bulk list.
type wireFields struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	Variant   string          `json:"variant"`
	Reason    string          `json:"reason"`
	ErrorCode string          `json:"errorCode"`
	Metadata  json.RawMessage `json:"metadata"`
}

func (f wireFields) answer(status int) wireAnswer {
	meta := canonicalJSON(f.Metadata)
	if meta == "{}" {
		meta = ""
	}
	return wireAnswer{Status: status, Key: f.Key, Value: canonicalJSON(f.Value), Variant: f.Variant, Reason: f.Reason, ErrorCode: f.ErrorCode, Metadata: meta}
}

// ofrepClient asks one OFREP server.
type ofrepClient struct {
	name   string
	base   string
	client *http.Client
	header http.Header
}

func (c ofrepClient) single(t *testing.T, key string, ec openfeature.FlattenedContext) wireAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	status, _, body, err := postJSON(ctx, c.client, c.base+"/ofrep/v1/evaluate/flags/"+key, map[string]any{"context": ec}, c.header)
	if err != nil {
		t.Fatalf("asking %s for %s: %v", c.name, key, err)
	}
	var f wireFields
	if err := json.Unmarshal(body, &f); err != nil {
		t.Fatalf("%s's answer for %s (%d): %v: %s", c.name, key, status, err, body)
	}
	return f.answer(status)
}

// bulk is the server's bulk answer by flag key, and its metadata.
func (c ofrepClient) bulk(t *testing.T, ec openfeature.FlattenedContext) (map[string]wireAnswer, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	status, _, body, err := postJSON(ctx, c.client, c.base+"/ofrep/v1/evaluate/flags", map[string]any{"context": ec}, c.header)
	if err != nil {
		t.Fatalf("asking %s for every flag: %v", c.name, err)
	}
	if status != http.StatusOK {
		t.Fatalf("%s answered a bulk evaluation with %d: %s", c.name, status, body)
	}
	var all struct {
		Flags    []wireFields    `json:"flags"`
		Metadata json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(body, &all); err != nil {
		t.Fatalf("%s's bulk answer: %v: %s", c.name, err, body)
	}
	out := make(map[string]wireAnswer, len(all.Flags))
	for _, f := range all.Flags {
		if _, dup := out[f.Key]; dup {
			t.Errorf("%s's bulk answer lists %q twice", c.name, f.Key)
		}
		out[f.Key] = f.answer(http.StatusOK)
	}
	return out, canonicalJSON(all.Metadata)
}

// flagdDifference is one of the deliberate differences from flagd that
// docs/targeting.md lists, as it shows in OFREP answers.
type flagdDifference struct {
	// entry names the entry of "Deliberate differences from flagd".
	entry string
	// doc and key are where it shows: a document and one of its flags;
	// "" for every document or every flag.
	doc, key string
	// shows says whether ours (flagsnap's answer) and theirs (flagd's)
	// differ as the entry says, for evaluation context ec.
	shows func(ec openfeature.FlattenedContext, ours, theirs wireAnswer) bool
}

// flagdRefusedFile shows a difference where flagd refused the whole file
// and flagsnap answers for the flag: flagd's answer is no such flag (404),
// and none in a bulk answer.
func flagdRefusedFile(_ openfeature.FlattenedContext, ours, theirs wireAnswer) bool {
	rejected := (theirs.Status == http.StatusNotFound && theirs.ErrorCode == string(openfeature.FlagNotFoundCode)) || theirs.Status == 0
	return rejected && ours.Status != 0
}

// flagdDifferences are the deliberate differences the test files reach.
// Two entries of the page do not show over OFREP: "Integer coercion" is a
// difference of the typed integer accessor, and OFREP carries no type; "The
// rpc resolver" is a way of building a provider, not an answer.
var flagdDifferences = []flagdDifference{
	{
		// flagd refuses the whole file (its check of default variants),
		// flagsnap only the flag: the others are served.
		entry: "A broken flag (a default variant that is not a variant) breaks that flag only; flagd rejects the whole file",
		doc:   "broken",
		shows: flagdRefusedFile,
	},
	{
		// The page says flagd rejects the whole file for mixed variant
		// types too. flagd v0.16 does not: it warns that the file does not
		// conform to its schema and serves the flag, a single evaluation
		// any variant, a bulk one reading every variant as the type of the
		// default variant, GENERAL for another. flagsnap refuses the flag.
		entry: "A broken flag (mixed variant types) breaks that flag only",
		doc:   "mixed-types", key: "mixed-variant-types",
		shows: func(_ openfeature.FlattenedContext, ours, theirs wireAnswer) bool {
			return ours.ErrorCode == string(openfeature.ParseErrorCode) &&
				(theirs.ErrorCode == "" || theirs.ErrorCode == string(openfeature.GeneralCode))
		},
	},
	{
		// flagd cannot read the file (a float64 overflows) and serves none
		// of it; flagsnap refuses the flag that holds the number.
		entry: "A number out of range (1e400) refuses the flag that holds it; flagd refuses the whole file",
		doc:   "out-of-range",
		shows: flagdRefusedFile,
	},
	{
		// flagd v0.16 does not know the operator: PARSE_ERROR.
		entry: "fractionalEvaluation, the legacy spelling of fractional, is evaluated",
		doc:   "flagd-differences", key: "legacy-fractional",
		shows: func(_ openfeature.FlattenedContext, ours, theirs wireAnswer) bool {
			return ours.ErrorCode == "" && slices.Contains([]string{"red", "blue"}, ours.Variant) &&
				theirs.ErrorCode == string(openfeature.ParseErrorCode)
		},
	},
	{
		// flagd answers the float it read, flagsnap refuses the flag.
		entry: "Integers past 2^53: flagsnap refuses the flag at load, flagd answers 9007199254740992 for 9007199254740993",
		doc:   "flagd-differences", key: "past-float-precision",
		shows: func(_ openfeature.FlattenedContext, ours, theirs wireAnswer) bool {
			return ours.ErrorCode == string(openfeature.ParseErrorCode) &&
				theirs.ErrorCode == "" && theirs.Variant == "exact" && theirs.Value == "9007199254740992"
		},
	},
	{
		// 2^60 is held exactly by a float, and both answer it, but in two
		// spellings: flagsnap the integer as written, flagd the shortest
		// decimal that reads back as the same float (1152921504606847000).
		// Every JSON client that reads numbers as float64 (the OFREP
		// providers do) reads the same value from both.
		entry: "Integers past 2^53: integers that a float holds exactly read as written in both",
		// Every document: flags.json has one too.
		shows: func(_ openfeature.FlattenedContext, ours, theirs wireAnswer) bool {
			same := ours
			same.Value = theirs.Value
			return same == theirs && sameFloat(ours.Value, theirs.Value)
		},
	},
	{
		entry: "targeting: null is the same as no targeting (STATIC); flagd answers DEFAULT",
		doc:   "flagd-differences", key: "null-targeting",
		shows: func(_ openfeature.FlattenedContext, ours, theirs wireAnswer) bool {
			same := ours
			same.Reason = theirs.Reason
			return ours.Reason == string(openfeature.StaticReason) && theirs.Reason == string(openfeature.DefaultReason) && same == theirs
		},
	},
	{
		// The rule returns the context's "plan": {"ab": 1}, an object.
		// flagd's engine runs it as an operation "ab" it does not know.
		entry: "Data is never code: a one-key object of the context is not run as an operation",
		doc:   "flagd-differences", key: "context-object-returned",
		shows: func(ec openfeature.FlattenedContext, ours, theirs wireAnswer) bool {
			plan, isObject := ec["plan"].(map[string]any)
			return isObject && len(plan) == 1 && ours.ErrorCode == string(openfeature.GeneralCode) && theirs.ErrorCode != ""
		},
	},
	{
		// The rule returns ["x","y"]; flagd strips the quotes of its JSON
		// text and finds the variant named [x,y].
		entry: "Arrays and objects returned by a rule answer GENERAL; flagd looks for a variant named after their JSON text",
		doc:   "flagd-differences", key: "array-returned",
		shows: func(_ openfeature.FlattenedContext, ours, theirs wireAnswer) bool {
			return ours.ErrorCode == string(openfeature.GeneralCode) && theirs.ErrorCode == "" && theirs.Variant == "[x,y]"
		},
	},
	{
		// fractional inside some, all of it to "b": flagsnap buckets by
		// the flag key and targeting key of the evaluation, and picks "b"
		// for any group when there is a targeting key; flagd looks for
		// them in the array element, a string, finds none and never picks
		// "b", so the rule answers "a".
		entry: "fractional inside map, filter, all, some or none takes the flag key and targeting key from the evaluation data",
		doc:   "flagd-differences", key: "fractional-in-some",
		shows: func(ec openfeature.FlattenedContext, ours, theirs wireAnswer) bool {
			groups, _ := ec["groups"].([]any)
			key, _ := ec["targetingKey"].(string)
			return len(groups) > 0 && key != "" && ours.Variant == "b" && theirs.Variant == "a" &&
				ours.ErrorCode == "" && theirs.ErrorCode == ""
		},
	},
}

// sameFloat says whether two canonical JSON numbers read as the same
// float64.
func sameFloat(a, b string) bool {
	fa, errA := strconv.ParseFloat(a, 64)
	fb, errB := strconv.ParseFloat(b, 64)
	return errA == nil && errB == nil && fa == fb
}

// flagdComparison compares the answers of flagsnap's and flagd's OFREP
// services on one document.
type flagdComparison struct {
	t             *testing.T
	doc           document
	ours, theirs  ofrepClient
	contexts      []openfeature.FlattenedContext // contexts when nil
	met           []int                          // per flagdDifferences entry
	compared      int
	failed        int
	metadataShown bool
}

// check reports a difference of ours from theirs that no entry of
// flagdDifferences explains.
func (c *flagdComparison) check(how, key string, i int, ec openfeature.FlattenedContext, ours, theirs wireAnswer) {
	c.t.Helper()
	c.compared++
	if ours == theirs {
		return
	}
	for j, d := range flagdDifferences {
		if (d.doc == "" || d.doc == c.doc.name) && (d.key == "" || d.key == key) && d.shows(ec, ours, theirs) {
			c.met[j]++
			return
		}
	}
	c.t.Errorf("%s: %s %q, context %d %v:\n  flagsnap %+v\n  flagd    %+v", c.doc.name, how, key, i, ec, ours, theirs)
	if c.failed++; c.failed == maxReported {
		c.t.Fatalf("%s: stopping after %d differences", c.doc.name, c.failed)
	}
}

// run asks both servers for every flag of the document in every context,
// one flag at a time and all at once.
func (c *flagdComparison) run() {
	t := c.t
	t.Helper()
	keys := c.doc.keys(t)
	ecs := c.contexts
	if ecs == nil {
		ecs = contexts
	}
	for i, ec := range ecs {
		oursAll, oursMeta := c.ours.bulk(t, ec)
		theirsAll, theirsMeta := c.theirs.bulk(t, ec)
		if oursMeta != theirsMeta && !c.metadataShown {
			// Not compared: flagd's bulk metadata is that of the
			// selector it was asked with, flagsnap's the flag set's.
			t.Logf("%s: bulk metadata: flagsnap %s, flagd %s", c.doc.name, oursMeta, theirsMeta)
			c.metadataShown = true
		}
		for _, key := range keys {
			ours := c.ours.single(t, key, ec)
			theirs := c.theirs.single(t, key, ec)
			if ours.Key != key || theirs.Key != key {
				t.Errorf("%s: asked for %q, flagsnap answered key %q, flagd %q", c.doc.name, key, ours.Key, theirs.Key)
			}
			c.check("single", key, i, ec, ours, theirs)
			if key == missingKey {
				continue
			}
			// A bulk item is the single answer, less the HTTP status.
			if bulk, ok := oursAll[key]; ok {
				single := ours
				single.Status = http.StatusOK
				if bulk != single {
					t.Errorf("%s: %q, context %d: flagsnap's bulk item %+v, its single answer %+v", c.doc.name, key, i, bulk, ours)
				}
			}
		}
		for _, key := range unionKeys(oursAll, theirsAll) {
			c.check("bulk", key, i, ec, oursAll[key], theirsAll[key])
		}
	}
}

func unionKeys(a, b map[string]wireAnswer) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// report logs what was compared and which differences were met, and fails
// for an entry of this document that never showed: flagd or flagsnap
// changed, and the table must say so.
func (c *flagdComparison) report() {
	t := c.t
	t.Helper()
	t.Logf("%s: %d answers compared with flagd's", c.doc.name, c.compared)
	for j, d := range flagdDifferences {
		if d.doc != "" && d.doc != c.doc.name {
			continue
		}
		t.Logf("%s: deliberate difference %q: %d answers", c.doc.name, d.entry, c.met[j])
		if d.doc != "" && c.met[j] == 0 && !t.Failed() {
			t.Errorf("%s: the deliberate difference %q (flag %q) was never met", c.doc.name, d.entry, d.key)
		}
	}
}

// flagdBin is the flagd daemon to compare with, or a skip.
func flagdBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(flagdBinEnv)
	if bin == "" {
		t.Skipf("%s is not set: no flagd daemon (v0.16) to compare with", flagdBinEnv)
	}
	return bin
}

// startFlagd runs flagd on the flag file at path, on loopback ports, until
// the test ends, and returns the base URL of its OFREP service once it has
// read the file (or said why not).
func startFlagd(t *testing.T, bin, path string, args ...string) string {
	t.Helper()
	p := flagdtest.Start(t, bin, "", append([]string{"-f", "file:" + path}, args...)...)
	base := p.OFREPURL()
	client := newClient(t)
	p.WaitUntil(t, wait, func() bool {
		// flagd's OFREP service may answer before flagd has read the file,
		// and may start after flagd has refused it: wait for an answer
		// that lists flags, or for an answer and flagd's word that it
		// refused them.
		refused := strings.Contains(p.Output(), "error setting state")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		status, _, body, err := postJSON(ctx, client, base+"/ofrep/v1/evaluate/flags", map[string]any{"context": map[string]any{}}, nil)
		if err != nil || status != http.StatusOK {
			return false
		}
		var all struct {
			Flags []json.RawMessage `json:"flags"`
		}
		return refused || json.Unmarshal(body, &all) == nil && len(all.Flags) > 0
	})
	return base
}

// TestAgainstFlagdOFREP runs the flagd daemon and flagsnap.OFREPHandler on
// the same flag files and compares their raw answers (key, value, variant,
// reason, error code, and the HTTP status of single evaluations) for every
// flag, one at a time and all at once, in every context. They differ only
// as docs/targeting.md says.
func TestAgainstFlagdOFREP(t *testing.T) {
	bin := flagdBin(t)
	forEachDocument(t, func(t *testing.T, doc document) {
		path := doc.write(t)
		flagdBase := startFlagd(t, bin, path)
		// flagd v0.16 buckets with fractional v2, flagsnap's default.
		p := newProvider(t, flagsnap.WithFlags(doc.data), flagsnap.WithFractionalVersion(fractional.V2))
		c := &flagdComparison{
			t: t, doc: doc, met: make([]int, len(flagdDifferences)),
			ours:   ofrepClient{name: "flagsnap", base: ofrepServer(t, p), client: newClient(t)},
			theirs: ofrepClient{name: "flagd", base: flagdBase, client: newClient(t)},
		}
		c.run()
		c.report()
	})
}

// TestAgainstFlagdOFREPContextOptions compares the static context and the
// context taken from request headers: flagd started with --context-value
// and --context-from-header, flagsnap.OFREPHandler with the options said
// to do the same, asked with and without the headers, by contexts that
// also set those attributes themselves.
func TestAgainstFlagdOFREPContextOptions(t *testing.T) {
	bin := flagdBin(t)
	flagdArgs := []string{
		"--context-value", "injectedmetadata=set", "--context-value", "locale=de-DE",
		"--context-from-header", "X-Tier=tier", "--context-from-header", "X-Locale=locale",
	}
	opts := []flagsnap.OFREPOption{
		flagsnap.WithOFREPContextValue("injectedmetadata", "set"), flagsnap.WithOFREPContextValue("locale", "de-DE"),
		flagsnap.WithOFREPContextFromHeader("X-Tier", "tier"), flagsnap.WithOFREPContextFromHeader("X-Locale", "locale"),
	}
	headers := []http.Header{
		nil,
		{"X-Tier": {"premium"}},
		{"X-Tier": {"banned"}, "X-Locale": {"mute"}},
	}
	ecs := append(slices.Clone(contexts),
		openfeature.FlattenedContext{"targetingKey": "user-20", "injectedmetadata": "unset", "tier": "debt", "locale": "en-GB"},
		openfeature.FlattenedContext{"locale": "mute", "tier": "internal"},
	)
	check := func(t *testing.T, doc document) {
		path := doc.write(t)
		flagdBase := startFlagd(t, bin, path, flagdArgs...)
		p := newProvider(t, flagsnap.WithFlags(doc.data), flagsnap.WithFractionalVersion(fractional.V2))
		oursBase := ofrepServer(t, p, opts...)
		client := newClient(t)
		for _, h := range headers {
			t.Run(fmt.Sprintf("headers %v", h), func(t *testing.T) {
				c := &flagdComparison{
					t: t, doc: doc, contexts: ecs, met: make([]int, len(flagdDifferences)),
					ours:   ofrepClient{name: "flagsnap", base: oursBase, client: client, header: h},
					theirs: ofrepClient{name: "flagd", base: flagdBase, client: client, header: h},
				}
				c.run()
				c.report()
			})
		}
	}
	for _, doc := range ownDocuments(t) {
		if doc.name == "flags" {
			t.Run(doc.name, func(t *testing.T) { check(t, doc) })
		}
	}
	t.Run("flagd-testbed", func(t *testing.T) {
		for _, doc := range testbedDocuments(t) {
			if doc.name == "testbed-all" {
				t.Run(doc.name, func(t *testing.T) { check(t, doc) })
			}
		}
	})
}

// TestAgainstFlagdOFREPRequestBodies sends both servers the same request
// bodies, well formed and not, for one flag and for all, and compares the
// HTTP status and error code. Where flagd evaluates a body that is not what
// OFREP says (a context that is not an object, a targetingKey that is not a
// string, data after the object) as if its context were empty, flagsnap
// answers 400 INVALID_CONTEXT, as docs/ofrep.md says.
func TestAgainstFlagdOFREPRequestBodies(t *testing.T) {
	bin := flagdBin(t)
	var doc document
	for _, d := range ownDocuments(t) {
		if d.name == "flags" {
			doc = d
		}
	}
	flagdBase := startFlagd(t, bin, doc.write(t))
	oursBase := ofrepServer(t, newProvider(t, flagsnap.WithFlags(doc.data)))
	client := newClient(t)
	key := doc.keys(t)[0]
	type outcome struct {
		status int
		code   string
	}
	ok, invalid := outcome{http.StatusOK, ""}, outcome{http.StatusBadRequest, string(openfeature.InvalidContextCode)}
	for _, tc := range []struct {
		name, body   string
		ours, theirs outcome
	}{
		{"not JSON", `notjson`, invalid, invalid},
		{"empty", ``, ok, ok},
		{"no context", `{}`, ok, ok},
		{"null context", `{"context":null}`, ok, ok},
		{"other members", `{"context":{},"extra":1}`, ok, ok},
		{"context a number", `{"context":5}`, invalid, ok},
		{"context an array", `{"context":[]}`, invalid, ok},
		{"targetingKey a number", `{"context":{"targetingKey":5}}`, invalid, ok},
		{"data after the object", `{"context":{}} more`, invalid, ok},
	} {
		for _, path := range []string{"/ofrep/v1/evaluate/flags/" + key, "/ofrep/v1/evaluate/flags"} {
			ours := postRaw(t, client, oursBase+path, tc.body)
			theirs := postRaw(t, client, flagdBase+path, tc.body)
			if (outcome{ours.Status, ours.ErrorCode}) != tc.ours || (outcome{theirs.Status, theirs.ErrorCode}) != tc.theirs {
				t.Errorf("%s, %s: flagsnap %d %q, flagd %d %q; want flagsnap %v, flagd %v",
					tc.name, path, ours.Status, ours.ErrorCode, theirs.Status, theirs.ErrorCode, tc.ours, tc.theirs)
			}
		}
	}
}

// postRaw posts body as it is, and reads the status and error code.
func postRaw(t *testing.T, client *http.Client, url, body string) wireAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	status, _, answer, err := postBytes(ctx, client, url, []byte(body), nil)
	if err != nil {
		t.Fatalf("posting %q to %s: %v", body, url, err)
	}
	var f wireFields
	if err := json.Unmarshal(answer, &f); err != nil {
		t.Fatalf("the answer to %q from %s (%d): %v: %s", body, url, status, err, answer)
	}
	return f.answer(status)
}
