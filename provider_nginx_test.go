package flagsnap

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/internal/loopback"
)

// nginxServer is a real nginx serving dir's www folder on loopback, with
// gzip on and /private/ behind a bearer token, as flag files are served in
// production.
type nginxServer struct {
	url string // http://127.0.0.1:PORT
	www string // the document root
	log string // the access log: each request's status and Content-Encoding
}

// statuses counts the requests nginx logged by status and encoding, such
// as "304 -" or "200 gzip".
func (ng nginxServer) statuses(t *testing.T) map[string]int {
	t.Helper()
	b, err := os.ReadFile(ng.log)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		out[line]++
	}
	return out
}

// startNginx starts nginx for the test, or skips the test when there is
// none: FLAGSNAP_NGINX names the binary, else nginx is looked up on PATH
// and in /usr/sbin.
func startNginx(t *testing.T, token string) nginxServer {
	t.Helper()
	bin := os.Getenv("FLAGSNAP_NGINX")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("nginx"); err != nil {
			bin = "/usr/sbin/nginx"
		}
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("nginx not found (set FLAGSNAP_NGINX, or install it: apt-get install -y nginx-light): %v", err)
	}
	dir := t.TempDir()
	www := filepath.Join(dir, "www")
	if err := os.MkdirAll(filepath.Join(www, "private"), 0o755); err != nil {
		t.Fatal(err)
	}
	port := loopback.FreePorts(t, 1)[0]
	conf := fmt.Sprintf(nginxConf, dir, port, www, token)
	confPath := filepath.Join(dir, "nginx.conf")
	writeFile(t, confPath, conf)

	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-p", dir, "-c", confPath)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting nginx: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			t.Error("nginx did not stop within 5s")
		}
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(5 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			conn.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("nginx exited: %s", stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx not listening on %s within 5s: %s", addr, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nginxServer{url: "http://" + addr, www: www, log: filepath.Join(dir, "access.log")}
}

// nginxConf runs one process as the user of the test, with every path in
// the test's directory (1), listening on a port (2), serving a root (3),
// and /private/ to the bearer of a token (4).
const nginxConf = `daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log stderr warn;
events { worker_connections 64; }
http {
	log_format statuses '$status $sent_http_content_encoding';
	access_log %[1]s/access.log statuses;
	client_body_temp_path %[1]s/body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	types { application/json json; }
	gzip on;
	gzip_types application/json;
	gzip_min_length 1;
	server {
		listen 127.0.0.1:%[2]d;
		root %[3]s;
		location /private/ {
			if ($http_authorization != "Bearer %[4]s") { return 401; }
		}
	}
}
`

// replaceFile writes content to path as deployments do: a new file
// renamed over the old one.
func replaceFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	writeFile(t, tmp, content)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestURLFromNginx(t *testing.T) {
	ng := startNginx(t, "unused")
	path := filepath.Join(ng.www, "flags.json")
	writeFile(t, path, flagsV1)
	p, err := NewProvider(WithURL(ng.url+"/flags.json"), WithPollInterval(20*time.Millisecond), WithRetryGracePeriod(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatalf("Init: %v", err)
	}
	ev := events{t: t, ch: p.EventChannel()}
	if c := color(p); c != "red" {
		t.Fatalf("color %q, want red", c)
	}
	// nginx answers the ETag of the first answer with 304.
	eventually(t, "three polls answered 304", func() bool { return p.SourceStatus().Unchanged >= 3 })
	ev.none(50 * time.Millisecond)
	// nginx logs a request once its answer is sent: the log may lag.
	eventually(t, "nginx to log one gzipped 200 and then 304s", func() bool {
		st := ng.statuses(t)
		return st["304 -"] >= 3 && st["200 gzip"] == 1
	})

	replaceFile(t, path, flagsV2)
	if e := ev.next(); e.EventType != openfeature.ProviderConfigChange {
		t.Fatalf("got %s, want CONFIGURATION_CHANGED", e.EventType)
	}
	if c := color(p); c != "blue" {
		t.Fatalf("color %q after the change, want blue", c)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if e := ev.next(); e.EventType != openfeature.ProviderStale || !strings.Contains(e.Message, "404 Not Found") {
		t.Fatalf("got %s %q, want STALE with nginx's 404", e.EventType, e.Message)
	}
	if c := color(p); c != "blue" {
		t.Errorf("color %q while the file is gone, want the flags in force", c)
	}
	replaceFile(t, path, flagsV1)
	ev.recovered("color", "limit", "old")
}

// nginx compresses JSON for clients that accept gzip; the document
// arrives decoded either way.
func TestURLFromNginxGzipped(t *testing.T) {
	ng := startNginx(t, "unused")
	writeFile(t, filepath.Join(ng.www, "flags.json"), flagsV1)
	for _, tt := range []struct {
		name string
		opts []Option
	}{
		{"transport asks", nil},
		{"header asks", []Option{WithHTTPHeader("Accept-Encoding", "gzip")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewProvider(append([]Option{WithURL(ng.url + "/flags.json")}, tt.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Shutdown()
			if err := p.Init(openfeature.EvaluationContext{}); err != nil {
				t.Fatalf("Init: %v", err)
			}
			if c := color(p); c != "red" {
				t.Errorf("color %q, want red", c)
			}
		})
	}
	eventually(t, "nginx to log two gzipped 200s", func() bool { return ng.statuses(t)["200 gzip"] == 2 })
}

// The token is read from its file for every request: nginx refuses the
// old one once it is rotated, and the new one is used.
func TestURLFromNginxWithARotatedToken(t *testing.T) {
	ng := startNginx(t, "second-token")
	writeFile(t, filepath.Join(ng.www, "private", "flags.json"), flagsV1)
	tokenFile := filepath.Join(t.TempDir(), "token")
	writeFile(t, tokenFile, "first-token\n")
	p, err := NewProvider(WithURL(ng.url+"/private/flags.json"), WithAuthorizationFile(tokenFile),
		WithPollInterval(20*time.Millisecond), WithDeadline(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	err = p.Init(openfeature.EvaluationContext{})
	if err == nil || !containsAll(err.Error(), "401 Unauthorized", "WithAuthorizationFile") {
		t.Fatalf("Init: %v, want the 401 and what to check", err)
	}
	ev := events{t: t, ch: p.EventChannel()}
	replaceFile(t, tokenFile, "second-token\n")
	if e := ev.next(); e.EventType != openfeature.ProviderReady {
		t.Fatalf("got %s %q, want READY with the rotated token", e.EventType, e.Message)
	}
	if c := color(p); c != "red" {
		t.Errorf("color %q, want red", c)
	}
}
