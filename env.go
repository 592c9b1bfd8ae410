package flagsnap

// The FLAGD_* environment variables: their names, how they are read, and
// when they apply (before the options, or where FromEnv stands).

import (
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/flagsnap/flagsnap/fractional"
)

// The environment variables, named as flagd's providers name them.
const (
	EnvResolver              = "FLAGD_RESOLVER" // rpc, in-process or file
	EnvHost                  = "FLAGD_HOST"
	EnvPort                  = "FLAGD_PORT"
	EnvSyncPort              = "FLAGD_SYNC_PORT" // in-process: wins over FLAGD_PORT
	EnvTargetURI             = "FLAGD_TARGET_URI"
	EnvTLS                   = "FLAGD_TLS"
	EnvSocketPath            = "FLAGD_SOCKET_PATH"
	EnvServerCertPath        = "FLAGD_SERVER_CERT_PATH"
	EnvDeadlineMs            = "FLAGD_DEADLINE_MS"
	EnvStreamDeadlineMs      = "FLAGD_STREAM_DEADLINE_MS"
	EnvRetryBackoffMs        = "FLAGD_RETRY_BACKOFF_MS"
	EnvRetryBackoffMaxMs     = "FLAGD_RETRY_BACKOFF_MAX_MS"
	EnvRetryGracePeriod      = "FLAGD_RETRY_GRACE_PERIOD" // seconds
	EnvKeepAliveTimeMs       = "FLAGD_KEEP_ALIVE_TIME_MS"
	EnvSourceSelector        = "FLAGD_SOURCE_SELECTOR"
	EnvProviderID            = "FLAGD_PROVIDER_ID"
	EnvOfflineFlagSourcePath = "FLAGD_OFFLINE_FLAG_SOURCE_PATH"
	EnvOfflinePollMs         = "FLAGD_OFFLINE_POLL_MS"
	EnvFatalStatusCodes      = "FLAGD_FATAL_STATUS_CODES" // e.g. PERMISSION_DENIED,UNAUTHENTICATED
	EnvCacheFile             = "FLAGD_CACHE_FILE"
	EnvFractionalVersion     = "FLAGD_FRACTIONAL_VERSION" // v1, v2 or v3
	// EnvOverrideFile names an override file (WithOverrideFile).
	EnvOverrideFile = "FLAGSNAP_OVERRIDE_FILE"
)

// FromEnv applies the FLAGD_* environment variables at this position in
// the option list. They are always applied first; give FromEnv last to
// let them win over explicit options. At its position a variable that
// chooses a source (FLAGD_RESOLVER, FLAGD_OFFLINE_FLAG_SOURCE_PATH)
// replaces the source the options before it chose, and options after it
// that choose a source replace the variables' choice.
func FromEnv() Option {
	return func(c *config) { c.applyEnv() }
}

// WithoutEnv makes the provider ignore the FLAGD_* environment variables:
// only the options configure it (FromEnv still applies them where it is
// given). Tests use it so that a developer's or a CI machine's variables
// cannot change, or break, the providers they build.
func WithoutEnv() Option {
	return func(c *config) { c.withoutEnv = true }
}

// applyEnv reads every variable that is set; a value that does not parse
// is an error naming the variable.
func (c *config) applyEnv() {
	c.envApplied = true
	c.applyEnvSource()
	envDuration(c, EnvOfflinePollMs, time.Millisecond, false, &c.OfflinePollInterval)
	envDuration(c, EnvDeadlineMs, time.Millisecond, false, &c.Deadline)
	envDuration(c, EnvRetryGracePeriod, time.Second, true, &c.RetryGracePeriod)
	envDuration(c, EnvStreamDeadlineMs, time.Millisecond, true, &c.StreamDeadline)
	envDuration(c, EnvRetryBackoffMs, time.Millisecond, false, &c.RetryBackoff)
	envDuration(c, EnvRetryBackoffMaxMs, time.Millisecond, false, &c.RetryBackoffMax)
	envDuration(c, EnvKeepAliveTimeMs, time.Millisecond, true, &c.KeepAlive)
	envString(c, EnvHost, false, &c.Host)
	envString(c, EnvSocketPath, false, &c.SocketPath)
	envString(c, EnvServerCertPath, true, &c.CertPath)
	envString(c, EnvSourceSelector, true, &c.Selector)
	envString(c, EnvProviderID, true, &c.ProviderID)
	envString(c, EnvCacheFile, false, &c.CacheFile)
	envParsed(c, EnvTargetURI, func(v string) (string, error) { return v, checkTargetURI(v) }, &c.TargetURI)
	if port, ok := envPort(c, EnvPort); ok {
		c.Port = port
	}
	if port, ok := envPort(c, EnvSyncPort); ok {
		c.syncPort = port
	}
	if v, ok := os.LookupEnv(EnvTLS); ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			c.fail("%s=%q is not true or false", EnvTLS, v)
		} else {
			c.TLS = b
		}
	}
	if v, ok := os.LookupEnv(EnvFatalStatusCodes); ok {
		c.FatalStatusCodes = splitList(v)
	}
	envParsed(c, EnvFractionalVersion, fractional.ParseVersion, &c.FractionalVersion)
	var override string
	if envString(c, EnvOverrideFile, false, &override) {
		c.addOverride(overrideSpec{path: override, fromEnv: true})
	}
}

// applyEnvSource reads the two variables that choose a source,
// FLAGD_RESOLVER and FLAGD_OFFLINE_FLAG_SOURCE_PATH. Where they apply they
// replace the source chosen before them, and are marked as the variables'
// own, so that an option given later replaces them in turn.
func (c *config) applyEnvSource() {
	var resolver Resolver
	var path string
	hasResolver := envParsed(c, EnvResolver, ParseResolver, &resolver)
	hasPath := envString(c, EnvOfflineFlagSourcePath, false, &path)
	// The two are read together, as flagd's providers read them: a file
	// makes in-process the file resolver, and rpc stays rpc.
	kind := resolverKind(resolver)
	if hasPath && (!hasResolver || resolver == ResolverInProcess) {
		kind = kindFile
	}
	if kind == kindNone {
		return
	}
	if kind != kindFile && c.OfflineFlagSourcePath != "" && !c.pathFromEnv {
		c.fileReplaced = c.OfflineFlagSourcePath
	}
	c.dropOtherSources(kind, false)
	if hasResolver {
		c.Resolver, c.resolverFromEnv = resolver, true
	}
	if hasPath {
		c.OfflineFlagSourcePath, c.pathFromEnv = path, true
	}
}

// envParsed sets dst to the variable's value as parse reads it, and says
// whether it did; parse's error, if any, is reported under the variable's
// name.
func envParsed[T any](c *config, name string, parse func(string) (T, error), dst *T) bool {
	v, ok := os.LookupEnv(name)
	if !ok {
		return false
	}
	x, err := parse(v)
	if err != nil {
		c.fail("%s: %v", name, err)
		return false
	}
	*dst = x
	return true
}

// envPort reads a TCP port from the variable name, and says whether it
// did.
func envPort(c *config, name string) (int, bool) {
	v, ok := os.LookupEnv(name)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 || n > 65535 {
		c.fail("%s=%q is not a TCP port", name, v)
		return 0, false
	}
	return n, true
}

// envString reads a string variable, and says whether it did; an empty
// value is an error unless emptyOK.
func envString(c *config, name string, emptyOK bool, dst *string) bool {
	v, ok := os.LookupEnv(name)
	if !ok {
		return false
	}
	if v == "" && !emptyOK {
		c.fail("%s is set but empty", name)
		return false
	}
	*dst = v
	return true
}

// envDuration reads a whole number of units from the variable name.
func envDuration(c *config, name string, unit time.Duration, zeroOK bool, dst *time.Duration) {
	v, ok := os.LookupEnv(name)
	if !ok {
		return
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	switch {
	case err != nil:
		c.fail("%s=%q is not a whole number", name, v)
	case n < 0 || (n == 0 && !zeroOK):
		c.fail("%s=%q must be positive", name, v)
	case n > math.MaxInt64/int64(unit):
		// Past this the duration would wrap around, to a negative one.
		c.fail("%s=%q is too large: at most %d", name, v, math.MaxInt64/int64(unit))
	default:
		*dst = time.Duration(n) * unit
	}
}

// splitList reads a comma-separated list, trimming spaces.
func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
