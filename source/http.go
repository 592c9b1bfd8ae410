package source

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/flagsnap/flagsnap/internal/flagddefault"
)

const (
	// maxRedirects is how many redirects a fetch follows, as flagd's
	// own HTTP sync does not need more and a loop must end.
	maxRedirects = 5
	// maxAuthorizationFile bounds what is read of the Authorization file:
	// a token, not a document.
	maxAuthorizationFile = 64 << 10
	// maxErrorBody bounds what is read of an error response, only to let
	// the connection be reused.
	maxErrorBody = 64 << 10
)

// HTTPConfig configures an HTTP source.
type HTTPConfig struct {
	// URL is the flag document's address, http or https. Required.
	URL string
	// PollInterval is the time between requests; 0 means the default, 5s.
	PollInterval time.Duration
	// Header is sent with every request (custom headers, an API key).
	Header http.Header
	// AuthorizationFile holds the Authorization header's value, read
	// again for every request, so that a rotated token (a Kubernetes
	// projected service-account token) is used as soon as it is written.
	// A file holding one word, a bare token, is sent as "Bearer <token>".
	AuthorizationFile string
	// Client makes the requests, for proxies, mTLS or custom transports;
	// nil means a client of the source's own. Either way redirects are
	// followed at most 5 times and never from https to http.
	Client *http.Client
	// CACertPath is a PEM file of the certificate authorities to trust
	// for https, instead of the system's; not with Client, whose
	// transport carries its own.
	CACertPath string
	// Timeout bounds each request, the body included; 0 means the
	// default, 500ms, as flagd's deadline.
	Timeout time.Duration
	// MaxBodySize bounds the document, in bytes, after decompression;
	// 0 means the default, 1 GiB. A larger one is reported through
	// [Sink.Lost] as a [*MessageTooLargeError].
	MaxBodySize int64
	// Logger receives diagnostics; nil means silent.
	Logger *slog.Logger
}

// HTTP is a [Source] that polls a URL for the flag document, with
// conditional requests: the ETag and Last-Modified of the last answer go
// back as If-None-Match and If-Modified-Since, so an unchanged document
// costs the server a 304. A gzip-encoded answer is decoded. How it polls,
// delivers and retries is [Poll]'s.
type HTTP struct {
	*Poll
	fetch *httpFetcher
}

// NewHTTP checks cfg and returns an HTTP source. It reads the CA file but
// makes no request.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	f, err := newHTTPFetcher(cfg)
	if err != nil {
		return nil, err
	}
	poll, err := NewPoll(PollConfig{Fetcher: f, Origin: f.origin, Interval: cfg.PollInterval, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("source: HTTPConfig: %w", err)
	}
	return &HTTP{Poll: poll, fetch: f}, nil
}

// Run implements [Source], as [Poll.Run] does. When it returns, the idle
// connections of the source's own client are closed: nothing is left
// behind by a provider that shut down. A client given in HTTPConfig keeps
// its own.
func (h *HTTP) Run(ctx context.Context, sink Sink) error {
	defer h.fetch.closeIdle()
	return h.Poll.Run(ctx, sink)
}

// httpFetcher makes the requests of an HTTP source.
type httpFetcher struct {
	url      string // as configured, for the requests
	origin   string // as shown: without a password
	header   http.Header
	authFile string
	client   *http.Client
	own      *http.Transport // the transport of the source's own client; nil with HTTPConfig.Client
	timeout  time.Duration
	maxBody  int64
}

func newHTTPFetcher(cfg HTTPConfig) (*httpFetcher, error) {
	u, err := parseHTTPURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	if err := checkHeader(cfg.Header); err != nil {
		return nil, err
	}
	switch {
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("source: HTTPConfig.Timeout must not be negative, got %v", cfg.Timeout)
	case cfg.MaxBodySize < 0:
		return nil, fmt.Errorf("source: HTTPConfig.MaxBodySize must not be negative, got %d", cfg.MaxBodySize)
	}
	client, own, err := httpClient(cfg)
	if err != nil {
		return nil, err
	}
	return &httpFetcher{
		own:      own,
		url:      cfg.URL,
		origin:   u.Redacted(),
		header:   cfg.Header.Clone(),
		authFile: cfg.AuthorizationFile,
		client:   client,
		timeout:  cmp.Or(cfg.Timeout, flagddefault.Deadline),
		maxBody:  cmp.Or(cfg.MaxBodySize, flagddefault.MaxMessageSize),
	}, nil
}

// closeIdle closes the idle connections of the source's own client.
func (f *httpFetcher) closeIdle() {
	if f.own != nil {
		f.own.CloseIdleConnections()
	}
}

// parseHTTPURL checks that raw is an absolute http or https URL.
func parseHTTPURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("source: HTTPConfig.URL is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("source: HTTPConfig.URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("source: HTTPConfig.URL %q: the scheme must be http or https", u.Redacted())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("source: HTTPConfig.URL %q has no host", u.Redacted())
	}
	return u, nil
}

// checkHeader refuses header names and values that cannot be sent, which
// the request would otherwise fail on at every poll.
func checkHeader(h http.Header) error {
	for name, values := range h {
		if name == "" || strings.IndexFunc(name, func(r rune) bool { return !isTokenChar(r) }) >= 0 {
			return fmt.Errorf("source: HTTPConfig.Header: %q is not a header name", name)
		}
		for _, v := range values {
			if strings.ContainsAny(v, "\r\n\x00") {
				return fmt.Errorf("source: HTTPConfig.Header: the value of %s holds a line break or NUL", name)
			}
		}
	}
	return nil
}

// isTokenChar tells whether r may appear in a header name (RFC 9110's
// tchar).
func isTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return r < 128 && strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

// httpClient is the client the requests go through: the configured one,
// or one of the source's own trusting CACertPath, either way with the
// redirect policy; own is the transport of the source's own client, nil
// for the configured one.
func httpClient(cfg HTTPConfig) (c *http.Client, own *http.Transport, err error) {
	c = &http.Client{}
	switch {
	case cfg.Client != nil && cfg.CACertPath != "":
		return nil, nil, errors.New("source: HTTPConfig.CACertPath and HTTPConfig.Client given together: set the certificate authorities in the client's transport")
	case cfg.Client != nil:
		*c = *cfg.Client
	default:
		own = http.DefaultTransport.(*http.Transport).Clone()
		if cfg.CACertPath != "" {
			pool, err := loadCAPool(cfg.CACertPath)
			if err != nil {
				return nil, nil, err
			}
			own.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
		}
		c.Transport = own
	}
	theirs := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := checkRedirect(req, via); err != nil {
			return err
		}
		if theirs != nil {
			return theirs(req, via)
		}
		return nil
	}
	return c, own, nil
}

// checkRedirect follows at most maxRedirects redirects, and none from
// https to http, which would send the request and its headers in the
// clear.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	for _, prev := range via {
		if prev.URL.Scheme == "https" && req.URL.Scheme == "http" {
			return fmt.Errorf("refused a redirect from https to http (%s)", req.URL.Redacted())
		}
	}
	return nil
}

// Fetch implements [Fetcher].
func (f *httpFetcher) Fetch(ctx context.Context, since Version) ([]byte, Version, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := f.request(ctx, since)
	if err != nil {
		return nil, Version{}, err
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, Version{}, &HTTPError{URL: f.origin, Err: unwrapURLError(err)}
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && since != (Version{}):
		return nil, since, ErrNotModified
	case resp.StatusCode != http.StatusOK:
		// Reading a little of the body lets the connection be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return nil, Version{}, &HTTPError{URL: f.origin, StatusCode: resp.StatusCode, RetryAfterDelay: retryAfter(resp.Header, time.Now())}
	}
	doc, err := f.readBody(resp)
	if err != nil {
		return nil, Version{}, err
	}
	if htmlPage(resp.Header, doc) {
		return nil, Version{}, &HTTPError{URL: f.origin, Err: errHTMLPage}
	}
	return doc, Version{ETag: resp.Header.Get("ETag"), Modified: resp.Header.Get("Last-Modified")}, nil
}

// request builds one GET, conditional on since.
func (f *httpFetcher) request(ctx context.Context, since Version) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url, nil)
	if err != nil {
		return nil, &HTTPError{URL: f.origin, Err: err}
	}
	for name, values := range f.header {
		req.Header[name] = values
	}
	if f.authFile != "" {
		auth, err := readAuthorization(f.authFile)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", auth)
	}
	if since.ETag != "" {
		req.Header.Set("If-None-Match", since.ETag)
	}
	if since.Modified != "" {
		req.Header.Set("If-Modified-Since", since.Modified)
	}
	return req, nil
}

// readBody reads the document, decoding gzip that the transport left
// encoded (a custom transport, or compression turned off), and refusing
// more than maxBody bytes having read no more than that: a body that
// announces a larger length is refused unread, and any other is read
// through ReadDocument, which stops one byte past the bound.
func (f *httpFetcher) readBody(resp *http.Response) ([]byte, error) {
	size := announcedSize(resp)
	if size > f.maxBody {
		// Closing the body unread drops the connection, which costs less
		// than reading what would be refused.
		return nil, f.tooLarge(size)
	}
	body, err := f.decoded(resp)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	doc, over, err := ReadDocument(body, size, f.maxBody)
	switch {
	case err != nil:
		return nil, &HTTPError{URL: f.origin, Err: fmt.Errorf("reading the body: %w", unwrapURLError(err))}
	case over:
		// The length, if any, was within the bound: it did not say.
		return nil, f.tooLarge(-1)
	}
	return doc, nil
}

// announcedSize is the document's length as the response announces it,
// or -1: the Content-Length of a gzip body the transport left encoded is
// the length of the encoding, which says nothing of the document's (the
// transport drops it from a body it decodes).
func announcedSize(resp *http.Response) int64 {
	if enc := resp.Header.Get("Content-Encoding"); !resp.Uncompressed && enc != "" && !strings.EqualFold(enc, "identity") {
		return -1
	}
	return resp.ContentLength
}

// decoded is the body as the document: resp.Body, or a gzip reader of it
// when the transport left gzip to the source.
func (f *httpFetcher) decoded(resp *http.Response) (io.ReadCloser, error) {
	if resp.Uncompressed || !strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		return io.NopCloser(resp.Body), nil // Fetch closes it
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		return nil, &HTTPError{URL: f.origin, Err: fmt.Errorf("reading the gzip body: %w", err)}
	}
	return zr, nil
}

func (f *httpFetcher) tooLarge(size int64) error {
	return &MessageTooLargeError{Target: f.origin, Size: int(size), Limit: int(f.maxBody), Setting: "HTTPConfig.MaxBodySize"}
}

// errHTMLPage is a page where a flag document was expected: most often a
// login page or a proxy's error page, answered with 200.
var errHTMLPage = errors.New("200 OK with an HTML page (Content-Type text/html), not a flag document: a login or error page? check the URL and its credentials")

// htmlPage reports whether a body served as text/html is a page, starting
// with markup, rather than a flag document a server labelled wrongly.
func htmlPage(h http.Header, body []byte) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "text/html" && bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("<"))
}

// readAuthorization reads the Authorization header's value from path,
// which must be a regular file (opening a FIFO would stall the poll).
func readAuthorization(path string) (string, error) {
	b, err := readRegular(path, path, maxAuthorizationFile)
	var tooLarge *MessageTooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return "", fmt.Errorf("the Authorization file %s is over %d bytes: it should hold a token", path, maxAuthorizationFile)
	case err != nil:
		return "", fmt.Errorf("reading the Authorization file: %w", err)
	}
	v := strings.TrimSpace(string(b))
	switch {
	case v == "":
		return "", fmt.Errorf("the Authorization file %s is empty", path)
	case strings.ContainsAny(v, "\r\n\x00"):
		return "", fmt.Errorf("the Authorization file %s holds more than one line", path)
	case !strings.ContainsAny(v, " \t"):
		return "Bearer " + v, nil
	}
	return v, nil
}

// HTTPError is a request that brought no flag document: the server
// answered with another status, or did not answer.
type HTTPError struct {
	URL        string // without a password
	StatusCode int    // 0 when there was no answer
	// RetryAfterDelay is how long the server asked to be left alone
	// (Retry-After), up to the 5 minutes a source waits at the most, or 0.
	RetryAfterDelay time.Duration
	Err             error // why there was no answer
}

func (e *HTTPError) Error() string {
	if e.StatusCode == 0 {
		return fmt.Sprintf("GET %s: %v", e.URL, e.Err)
	}
	msg := fmt.Sprintf("GET %s: %d %s", e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	if e.RetryAfterDelay > 0 {
		msg += fmt.Sprintf(" (retry after %v)", e.RetryAfterDelay)
	}
	return msg
}

func (e *HTTPError) Unwrap() error { return e.Err }

// RetryAfter implements [RetryAfter].
func (e *HTTPError) RetryAfter() time.Duration { return e.RetryAfterDelay }

// unwrapURLError drops the *url.Error around a transport's error: the
// method and URL are in HTTPError's message already.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// retryAfter reads a Retry-After header, in seconds or as a date, up to
// maxRetryAfter, the longest a source waits; 0 when it is absent or does
// not parse.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, int64(maxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxRetryAfter)
	}
	return 0
}
