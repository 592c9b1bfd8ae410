package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/internal/flagddefault"
	"github.com/flagsnap/flagsnap/internal/logtest"
)

const colorFlags = `{"flags": {
  "color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "%s"},
  "region": {"state": "ENABLED", "variants": {"eu": "eu", "other": "other"}, "defaultVariant": "other",
    "targeting": {"if": [{"==": [{"var": "region"}, "eu"]}, "eu"]}}
}}`

func colorDoc(def string) string { return strings.Replace(colorFlags, "%s", def, 1) }

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// serveRun is flagsnap serve running in process.
type serveRun struct {
	stdout, stderr *logtest.Buffer
	addr           string
	stop           func() int
}

var servingLine = regexp.MustCompile(`serving \S+ on (\S+?)(?: \(TLS\))?(?:,|\n)`)

func startServe(t *testing.T, args ...string) *serveRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &serveRun{stdout: &logtest.Buffer{}, stderr: &logtest.Buffer{}}
	done := make(chan int, 1)
	go func() { done <- runContext(ctx, append([]string{"serve"}, args...), r.stdout, r.stderr) }()
	stopped, code := false, 0
	r.stop = func() int {
		if !stopped {
			cancel()
			select {
			case code = <-done:
			case <-time.After(wait):
				t.Fatal("serve did not stop")
			}
			stopped = true
		}
		return code
	}
	t.Cleanup(func() { r.stop() })
	deadline := time.Now().Add(wait)
	for {
		if m := servingLine.FindStringSubmatch(r.stdout.String()); m != nil {
			r.addr = m[1]
			return r
		}
		select {
		case code = <-done:
			stopped = true
			t.Fatalf("serve ended with %d\nstdout: %s\nstderr: %s", code, r.stdout, r.stderr)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s %s", r.stdout, r.stderr)
		}
	}
}

func (r *serveRun) port(t *testing.T) int {
	t.Helper()
	_, p, err := net.SplitHostPort(r.addr)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(p)
	return port
}

// connect starts an in-process provider following the server, as a user
// trying flagsnap against flagsnap serve would.
func connect(t *testing.T, opts ...flagsnap.Option) *flagsnap.Provider {
	t.Helper()
	p, err := flagsnap.NewProvider(append([]flagsnap.Option{
		flagsnap.WithResolver(flagsnap.ResolverInProcess),
		flagsnap.WithDeadline(5 * time.Second),
		flagsnap.WithRetryBackoff(50*time.Millisecond, 200*time.Millisecond),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatalf("Init: %v", err)
	}
	return p
}

func str(p *flagsnap.Provider, flag string, ctx openfeature.FlattenedContext) string {
	return p.StringEvaluation(context.Background(), flag, "none", ctx).Value
}

// nextEvent waits for an event of type want, skipping others.
func nextEvent(t *testing.T, p *flagsnap.Provider, want openfeature.EventType) openfeature.Event {
	t.Helper()
	timeout := time.After(wait)
	for {
		select {
		case ev := <-p.EventChannel():
			if ev.EventType == want {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event", want)
		}
	}
}

// noEvent checks that no event comes for a while.
func noEvent(t *testing.T, p *flagsnap.Provider, d time.Duration) {
	t.Helper()
	select {
	case ev := <-p.EventChannel():
		t.Fatalf("unexpected event %s: %+v", ev.EventType, ev.ProviderEventDetails)
	case <-time.After(d):
	}
}

func TestServe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, colorDoc("red"))
	r := startServe(t, path, "--addr", "127.0.0.1:0", "--context-value", "region=eu")
	p := connect(t, flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(r.port(t)))

	if c := str(p, "color", nil); c != "red" {
		t.Fatalf("color %q, want red", c)
	}
	// The sync context reaches every evaluation.
	if reg := str(p, "region", nil); reg != "eu" {
		t.Errorf("region %q: the sync context is not applied", reg)
	}

	writeFile(t, path, colorDoc("blue"))
	ev := nextEvent(t, p, openfeature.ProviderConfigChange)
	if !slices.Equal(ev.FlagChanges, []string{"color"}) {
		t.Errorf("changed flags %v, want [color]", ev.FlagChanges)
	}
	if c := str(p, "color", nil); c != "blue" {
		t.Errorf("color %q after the change, want blue", c)
	}
	waitFor(t, "the change reported", func() bool { return strings.Contains(r.stdout.String(), path+": sent 2 flags (1 stream open)") })

	// A change that does not parse is not sent: the provider keeps its
	// flags and hears nothing.
	writeFile(t, path, `{"flags": {`)
	waitFor(t, "the bad change reported", func() bool { return strings.Contains(r.stdout.String(), path+": not sent: invalid JSON") })
	noEvent(t, p, 200*time.Millisecond)
	writeFile(t, path, colorDoc("red"))
	nextEvent(t, p, openfeature.ProviderConfigChange)
	if c := str(p, "color", nil); c != "red" {
		t.Errorf("color %q after the repair, want red", c)
	}

	if code := r.stop(); code != exitOK {
		t.Errorf("serve ended with %d: %s", code, r.stderr)
	}
	if !strings.HasSuffix(r.stdout.String(), "stopped\n") {
		t.Errorf("stdout %q", r.stdout)
	}
}

// A follower's stream is logged when it opens and when its first flag set
// is sent, with the follower's address, provider id and selector; a file's
// change is logged as before.
func TestServeLogsFollowers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, colorDoc("red"))
	r := startServe(t, path, "--addr", "127.0.0.1:0")
	tests := []struct {
		name string
		opts []flagsnap.Option
		want string
	}{
		{"no id, no selector", nil, `providerId="" selector=""`},
		{"an id and a selector", []flagsnap.Option{flagsnap.WithProviderID("checkout"), flagsnap.WithSelector("flags.json")},
			`providerId=checkout selector=flags.json`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			connect(t, append(tt.opts, flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(r.port(t)))...)
			for line, after := range map[string]string{`"stream opened"`: ``, `"first flag set sent"`: ` bytes=\d+`} {
				re := regexp.MustCompile(`(?m)^level=INFO msg=` + line + ` follower=127\.0\.0\.1:\d+ ` + regexp.QuoteMeta(tt.want) + after + `$`)
				waitFor(t, line, func() bool { return re.MatchString(r.stdout.String()) })
			}
		})
	}
}

// The files of --selector-dir are sources next to FILE, as flagd's -f
// options are: selected by their names, merged without a selector, the
// later file winning a flag both define.
func TestServeSelectorDir(t *testing.T) {
	dir := t.TempDir()
	main := filepath.Join(dir, "flags.json")
	writeFile(t, main, colorDoc("red"))
	teams := filepath.Join(dir, "teams")
	if err := os.Mkdir(teams, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(teams, "checkout.yaml"), "flags:\n  color:\n    state: ENABLED\n    variants: {red: red, green: green}\n    defaultVariant: green\n")
	writeFile(t, filepath.Join(teams, "notes.txt"), "not a flag file")
	r := startServe(t, main, "--addr", "127.0.0.1:0", "--selector-dir", teams)
	if !strings.Contains(r.stdout.String(), ", sources: flags.json, checkout.yaml\n") {
		t.Errorf("start line %q", r.stdout)
	}
	port := flagsnap.WithPort(r.port(t))
	team := connect(t, flagsnap.WithHost("127.0.0.1"), port, flagsnap.WithSelector("checkout.yaml"))
	own := connect(t, flagsnap.WithHost("127.0.0.1"), port, flagsnap.WithSelector("source="+main))
	all := connect(t, flagsnap.WithHost("127.0.0.1"), port)
	eu := map[string]any{"region": "eu"}
	for _, tt := range []struct {
		name          string
		p             *flagsnap.Provider
		color, region string
	}{
		{"checkout.yaml", team, "green", "none"},
		// As in flagd, a file's flag that a later file overrides is not
		// among its flags.
		{"source=FILE", own, "none", "eu"},
		{"no selector", all, "green", "eu"},
	} {
		if c := str(tt.p, "color", eu); c != tt.color {
			t.Errorf("%s: color %q, want %q", tt.name, c, tt.color)
		}
		if reg := str(tt.p, "region", eu); reg != tt.region {
			t.Errorf("%s: region %q, want %q", tt.name, reg, tt.region)
		}
	}

	writeFile(t, filepath.Join(teams, "checkout.yaml"), "flags:\n  color:\n    state: ENABLED\n    variants: {red: red, green: green, blue: blue}\n    defaultVariant: blue\n")
	for _, p := range []*flagsnap.Provider{team, all} {
		nextEvent(t, p, openfeature.ProviderConfigChange)
		if c := str(p, "color", nil); c != "blue" {
			t.Errorf("after the change: color %q", c)
		}
	}
	noEvent(t, own, 100*time.Millisecond)
}

func TestServeSocket(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "flags.json")
	writeFile(t, path, colorDoc("blue"))
	socket := filepath.Join(dir, "flagd.sock")
	r := startServe(t, path, "--socket", socket)
	if r.addr != socket {
		t.Errorf("serving on %q, want %q", r.addr, socket)
	}
	p := connect(t, flagsnap.WithSocketPath(socket))
	if c := str(p, "color", nil); c != "blue" {
		t.Errorf("color %q over the socket", c)
	}
}

func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "flags.json")
	writeFile(t, path, colorDoc("blue"))
	certFile, keyFile := writeKeyPair(t, dir)
	r := startServe(t, path, "--addr", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.Contains(r.stdout.String(), "(TLS)") {
		t.Errorf("start line %q", r.stdout)
	}
	p := connect(t, flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(r.port(t)), flagsnap.WithTLS(certFile))
	if c := str(p, "color", nil); c != "blue" {
		t.Errorf("color %q over TLS", c)
	}
}

// writeKeyPair writes a self-signed certificate for 127.0.0.1 and its key.
func writeKeyPair(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "flagsnap serve test"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeFile(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	writeFile(t, keyFile, string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})))
	return certFile, keyFile
}

func TestServeBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "flags.json")
	writeFile(t, good, colorDoc("red"))
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, `{"flags": `)
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{filepath.Join(dir, "missing.json")}, "missing.json: no such file or directory"},
		{[]string{bad}, "bad.json: invalid JSON"},
		{[]string{good, "--addr", "127.0.0.1:0", "--socket", filepath.Join(dir, "s")}, "give --addr or --socket, not both"},
		{[]string{good, "--tls-cert", good}, "--tls-cert and --tls-key go together"},
		{[]string{good, "--tls-cert", good, "--tls-key", good}, "--tls-cert/--tls-key:"},
		{[]string{good, "--selector-dir", filepath.Join(dir, "nope")}, "--selector-dir: "},
		{[]string{good, "--selector-dir", empty}, "holds no .json, .yaml or .yml file"},
		{[]string{good, "--context-value", "novalue"}, `want KEY=VALUE, not "novalue"`},
		{[]string{good, "--addr", busy.Addr().String()}, "address already in use"},
		{[]string{good, good}, "want one FILE, got 2"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		// Bad input must stop serve before it serves; if it ever serves,
		// the deadline ends it and the status says so.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		code := runContext(ctx, append([]string{"serve"}, tt.args...), &out, &errOut)
		cancel()
		wantStatus(t, code, exitBadInput, out.String(), errOut.String())
		wantOneLine(t, errOut.String(), tt.want)
	}
}

// TestServeDefaultsAreTheProvider: serve listens where a provider in
// in-process mode dials by default and polls a URL as WithURL does, and
// its usage text names those values, not older ones.
func TestServeDefaultsAreTheProvider(t *testing.T) {
	var f serveFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	f.define(fs)
	port := strconv.Itoa(flagddefault.InProcessPort)
	for name, want := range map[string]string{
		"addr":          "127.0.0.1:" + port,
		"poll-interval": flagddefault.PollInterval.String(),
	} {
		if got := fs.Lookup(name).DefValue; got != want {
			t.Errorf("--%s defaults to %s, want %s", name, got, want)
		}
		if usage := "[--" + name + " " + want + "]"; !strings.Contains(serveUsage, usage) {
			t.Errorf("the usage does not say %s", usage)
		}
	}
	if example := "flagsnap.WithPort(" + port + ")"; !strings.Contains(serveUsage, example) {
		t.Errorf("the usage's example does not say %s", example)
	}
}
