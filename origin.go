package flagsnap

// Where a provider's flags come from, described for its messages, logs
// and events, with what to change when nothing comes from there.

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flagsnap/flagsnap/source"
)

// origin says where a provider's flags come from, in the words of its
// messages, logs and events.
type origin struct {
	kind originKind
	// name is what events carry as "source" and logs as "source": a
	// file path, a server address, "memory", or a custom source's type.
	name string
	// description is name in a sentence, with what was asked of it: "the
	// sync server at localhost:8015 (no TLS, no selector)".
	description string
}

// originKind is the kind of source, which decides the advice of remedy.
type originKind uint8

const (
	originServer originKind = iota
	originFile
	originMemory
	originCustom
	originURL
)

// describeOrigin works out the origin from the configuration, before any
// source is built: the sources log through a logger that names it.
func (p *Provider) describeOrigin() origin {
	c := &p.cfg
	switch {
	case c.source != nil:
		return sourceOrigin(c.source)
	case c.flags != nil:
		return origin{kind: originMemory, name: source.MemoryOrigin, description: "the flags given with WithFlags"}
	case c.URL != "":
		name := redactedURL(c.URL)
		return origin{kind: originURL, name: name, description: "the URL " + name}
	case c.Resolver == ResolverFile:
		return origin{kind: originFile, name: c.OfflineFlagSourcePath, description: "the flag file " + c.OfflineFlagSourcePath}
	}
	var name string
	switch {
	case c.SocketPath != "":
		name = "unix:" + c.SocketPath
	case c.TargetURI != "":
		name = c.TargetURI
	default:
		name = net.JoinHostPort(strings.Trim(c.Host, "[]"), strconv.Itoa(c.Port))
	}
	tls, selector := "no TLS", "no selector"
	if c.TLS {
		tls = "TLS"
		if c.CertPath != "" {
			tls += " trusting " + c.CertPath
		}
	}
	if c.Selector != "" {
		selector = "selector " + strconv.Quote(c.Selector)
	}
	return origin{kind: originServer, name: name, description: fmt.Sprintf("the sync server at %s (%s, %s)", name, tls, selector)}
}

// sourceOrigin is the origin of a source given as such: the main source
// of WithSource, or an override.
func sourceOrigin(src source.Source) origin {
	switch s := src.(type) {
	case *source.Memory:
		return origin{kind: originMemory, name: source.MemoryOrigin, description: "the memory source"}
	case *source.File:
		return origin{kind: originFile, name: s.Path(), description: "the flag file " + s.Path()}
	case *source.GRPC:
		return origin{kind: originServer, name: s.Target(), description: "the sync server at " + s.Target()}
	case *source.HTTP:
		return origin{kind: originURL, name: s.Origin(), description: "the URL " + s.Origin()}
	case interface{ Origin() string }:
		// Sources of other modules (object storage) name their origin.
		return origin{kind: originCustom, name: s.Origin(), description: s.Origin()}
	}
	name := fmt.Sprintf("%T", src)
	return origin{kind: originCustom, name: name, description: "the source " + name}
}

// resolverName names how the flags are obtained, in flagd's words where
// it has them: "file", "in-process" (a sync server), or "memory" and
// "custom" for flags given in memory and a source of the user's own.
func (p *Provider) resolverName() string {
	switch p.origin.kind {
	case originFile:
		return string(ResolverFile)
	case originServer:
		return string(ResolverInProcess)
	case originMemory:
		return "memory"
	case originURL:
		return "http"
	}
	return "custom"
}

// remedy says what to change when no flags came from o, given the last
// thing that went wrong (nil when nothing was heard at all).
func (o origin) remedy(cause error) string {
	switch o.kind {
	case originFile:
		if strings.Contains(errText(cause), "no such file") {
			return "create the file, or point WithFile (" + EnvOfflineFlagSourcePath + ") at the flag file"
		}
		return "fix the file, which is read again as soon as it changes, or point WithFile (" + EnvOfflineFlagSourcePath + ") at another"
	case originServer:
		return serverRemedy(cause)
	case originMemory:
		return "give a document that loads"
	case originURL:
		return urlRemedy(cause)
	}
	var r source.Remedy
	if errors.As(cause, &r) && r.Remedy() != "" {
		return r.Remedy()
	}
	return "check the source"
}

// serverRemedy is the remedy for a sync server, from what went wrong last.
func serverRemedy(cause error) string {
	address := "the address comes from WithHost and WithPort (" + EnvHost + ", " + EnvSyncPort + " or " + EnvPort + "), WithTargetURI (" +
		EnvTargetURI + ") or WithSocketPath (" + EnvSocketPath + ")"
	text := errText(cause)
	switch {
	case cause == nil:
		return "the server has not answered yet: check that it is up and reachable; " + address
	case status.Code(cause) == codes.Unimplemented:
		return "the server there does not serve flagd.sync.v1 (flagd serves it on its sync port, " + strconv.Itoa(DefaultInProcessPort) +
			" by default, not on its evaluation port " + strconv.Itoa(DefaultRPCPort) + "); " + address
	case strings.Contains(text, "handshake"), strings.Contains(text, "certificate"), strings.Contains(text, "tls:"):
		return "the TLS handshake failed: check WithTLS (" + EnvTLS + ") and the CA certificate (" + EnvServerCertPath + "), or drop TLS for a plaintext server"
	case strings.Contains(text, "connection refused"):
		return "nothing listens there: check that flagd (or flagsnap serve) runs with its sync port open; " + address
	case strings.Contains(text, "over the limit"):
		return "raise the bound with WithMaxMessageSize"
	}
	return "check that a flagd sync server runs there; " + address
}

// urlRemedy is the remedy for a URL, from what went wrong last.
func urlRemedy(cause error) string {
	var he *source.HTTPError
	var tooLarge *source.MessageTooLargeError
	text := errText(cause)
	switch {
	case cause == nil:
		return "the server has not answered yet: check that the URL given to WithURL is reachable from here"
	case errors.As(cause, &tooLarge):
		return "raise the bound with WithMaxMessageSize"
	case errors.As(cause, &he) && (he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden):
		return "the server refused the credentials: check WithAuthorizationFile and WithHTTPHeader"
	case errors.As(cause, &he) && he.StatusCode == http.StatusNotFound:
		return "nothing is at that path: check the path of the URL given to WithURL"
	case errors.As(cause, &he) && he.StatusCode != 0:
		return "the server failed to answer with the flags: check the server, or the URL given to WithURL"
	case strings.Contains(text, "certificate"), strings.Contains(text, "tls:"):
		return "the TLS handshake failed: trust the server's certificate authority with WithCertPath (" + EnvServerCertPath + ")"
	case strings.Contains(text, "connection refused"):
		return "nothing listens there: check the host and port of the URL given to WithURL"
	case strings.Contains(text, "deadline exceeded"), strings.Contains(text, "Timeout"):
		return "the server did not answer within the deadline: raise it with WithDeadline, or check the server"
	}
	return "check the URL given to WithURL"
}

// redactedURL is raw with any password in it replaced, as messages show
// it; raw itself when it does not parse, which NewProvider reports.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Redacted()
}
