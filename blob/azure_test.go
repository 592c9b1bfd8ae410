package blob_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	gcblob "gocloud.dev/blob"
)

const (
	// The account and key every Azure Storage emulator accepts, as
	// Microsoft publishes them.
	azuriteAccount = "devstoreaccount1"
	azuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	// azuriteStart bounds the emulator's start: node loading it on a
	// busy machine.
	azuriteStart = 60 * time.Second
)

// azuriteBinary finds azurite-blob: under the directory FLAGSNAP_AZURITE
// names (an npm prefix or project), or on PATH.
func azuriteBinary() (string, bool) {
	if dir := os.Getenv("FLAGSNAP_AZURITE"); dir != "" {
		for _, p := range []string{"azurite-blob", "bin/azurite-blob", "node_modules/.bin/azurite-blob"} {
			if path := filepath.Join(dir, p); isExecutable(path) {
				return path, true
			}
		}
	}
	path, err := exec.LookPath("azurite-blob")
	return path, err == nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// azureStore is Azurite's blob service on loopback, behind a proxy that
// counts requests: HEAD is an attribute read, GET a download. The source
// reaches it with the emulator's well-known account through the
// environment, as gocloud.dev's azureblob reads it; the test writes
// straight to the emulator.
func azureStore(t *testing.T) *store {
	t.Helper()
	bin, ok := azuriteBinary()
	if !ok {
		t.Skip("azurite-blob is not installed: npm install -g azurite@3.37.0, or set FLAGSNAP_AZURITE to the directory it is installed in")
	}
	clearEnv(t, "AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGEBLOB_CONNECTIONSTRING",
		"AZURE_STORAGE_DOMAIN", "AZURE_STORAGE_PROTOCOL", "AZURE_STORAGE_IS_CDN", "AZURE_STORAGE_IS_LOCAL_EMULATOR")
	t.Setenv("AZURE_STORAGE_ACCOUNT", azuriteAccount)
	t.Setenv("AZURE_STORAGE_KEY", azuriteKey)
	addr := startAzurite(t, bin)

	const container = "flags"
	prefix := azuriteAccount + "/" + container
	reqs := newRequests(headOrGet(prefix))
	proxy := azuriteProxy(t, addr)
	srv := serve(t, reqs.wrap(proxy))
	proxyAddr := strings.TrimPrefix(srv.URL, "http://")

	writer := azureWriter(t, container, addr)
	return &store{
		name:   "azure",
		bucket: container,
		url: func(key string) string {
			return "azblob://" + container + "/" + key + "?protocol=http&domain=" + proxyAddr
		},
		origin:   func(key string) string { return "azblob://" + container + "/" + key },
		requests: reqs,
		put: func(t *testing.T, key, doc string) {
			t.Helper()
			if err := writer.WriteAll(context.Background(), key, []byte(doc), &gcblob.WriterOptions{ContentType: "application/json"}); err != nil {
				t.Fatal(err)
			}
		},
		remove: func(t *testing.T, key string) {
			t.Helper()
			if err := writer.Delete(context.Background(), key); err != nil {
				t.Fatal(err)
			}
		},
	}
}

// startAzurite runs the emulator on a free loopback port, with its data
// in a temporary directory and its telemetry off, until the test ends,
// and returns its address once it listens.
func startAzurite(t *testing.T, bin string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	out := &readyWriter{want: "successfully listen", ready: make(chan struct{})}
	cmd := exec.Command(bin, "--blobHost", "127.0.0.1", "--blobPort", fmt.Sprint(port), "--location", t.TempDir(),
		"--skipApiVersionCheck", "--loose", "--disableTelemetry")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	select {
	case <-out.ready:
	case err := <-exited:
		exited <- err // for the cleanup
		t.Fatalf("%s exited before it listened (%v):\n%s", bin, err, out.String())
	case <-time.After(azuriteStart):
		t.Fatalf("%s did not listen within %v:\n%s", bin, azuriteStart, out.String())
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// readyWriter keeps what a process prints and closes ready once it
// printed want.
type readyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	want  string
	ready chan struct{}
	done  bool
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.done && strings.Contains(w.buf.String(), w.want) {
		w.done = true
		close(w.ready)
	}
	return len(p), nil
}

func (w *readyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// azuriteProxy forwards to the emulator at addr, over connections it
// closes when the test ends.
func azuriteProxy(t *testing.T, addr string) http.Handler {
	t.Helper()
	target := &url.URL{Scheme: "http", Host: addr}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(transport.CloseIdleConnections)
	return &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: transport,
	}
}

// azureWriter opens the container at the emulator, creating it, for the
// test to write objects with.
func azureWriter(t *testing.T, name, addr string) *gcblob.Bucket {
	t.Helper()
	ctx := context.Background()
	b, err := gcblob.OpenBucket(ctx, "azblob://"+name+"?protocol=http&domain="+addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	var c *container.Client
	if !b.As(&c) {
		t.Fatal("the azblob bucket is not a *container.Client")
	}
	if _, err := c.Create(ctx, nil); err != nil {
		t.Fatalf("creating the container: %v", err)
	}
	return b
}
