package flagsnap

// The FLAGD_* variables that are set but configure nothing: an option
// overrode them, or the source in force does not read them. Each is logged
// once, so that a variable that seems to be ignored is explained.

import (
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
)

// envCheck says when a variable configures the provider.
type envCheck struct {
	name string
	// reads is the kind of source that reads the variable; kindNone for
	// one that every source reads.
	reads sourceKind
	// unused is why the variable's value, as env holds it, is not the one
	// c runs with ("" when it is); from says where c's flags come from.
	unused func(c, env *config, from string) string
}

// envChecks covers every variable that configures one setting.
var envChecks = []envCheck{
	{EnvResolver, kindNone, sourceChosen(func(c *config) bool { return c.resolverFromEnv })},
	{EnvOfflineFlagSourcePath, kindFile, sourceChosen(func(c *config) bool { return c.pathFromEnv })},
	{EnvOfflinePollMs, kindFile, overridden(func(c *Config) any { return c.OfflinePollInterval })},
	{EnvHost, kindServer, address(false, overridden(func(c *Config) any { return c.Host }))},
	{EnvPort, kindServer, address(false, portUnused)},
	{EnvSyncPort, kindServer, address(false, syncPortUnused)},
	{EnvTargetURI, kindServer, address(true, overridden(func(c *Config) any { return c.TargetURI }))},
	{EnvSocketPath, kindServer, overridden(func(c *Config) any { return c.SocketPath })},
	{EnvTLS, kindServer, overridden(func(c *Config) any { return c.TLS })},
	{EnvServerCertPath, kindNone, certPathUnused},
	{EnvStreamDeadlineMs, kindServer, overridden(func(c *Config) any { return c.StreamDeadline })},
	{EnvRetryBackoffMs, kindServer, overridden(func(c *Config) any { return c.RetryBackoff })},
	{EnvRetryBackoffMaxMs, kindServer, overridden(func(c *Config) any { return c.RetryBackoffMax })},
	{EnvKeepAliveTimeMs, kindServer, overridden(func(c *Config) any { return c.KeepAlive })},
	{EnvSourceSelector, kindServer, overridden(func(c *Config) any { return c.Selector })},
	{EnvProviderID, kindServer, overridden(func(c *Config) any { return c.ProviderID })},
	{EnvFatalStatusCodes, kindServer, overridden(func(c *Config) any { return strings.Join(c.FatalStatusCodes, ",") })},
	{EnvDeadlineMs, kindNone, overridden(func(c *Config) any { return c.Deadline })},
	{EnvRetryGracePeriod, kindNone, overridden(func(c *Config) any { return c.RetryGracePeriod })},
	{EnvCacheFile, kindNone, overridden(func(c *Config) any { return c.CacheFile })},
	{EnvFractionalVersion, kindNone, overridden(func(c *Config) any { return c.FractionalVersion })},
	{EnvOverrideFile, kindNone, overrideFileUnused},
}

// overrideFileUnused is the check of the override file, which an option
// naming an override replaces.
func overrideFileUnused(c, _ *config, _ string) string {
	if slices.ContainsFunc(c.overrides, func(o overrideSpec) bool { return o.fromEnv }) {
		return ""
	}
	return "an option overrides it: WithOverrideFile or WithOverrideSource replaces it"
}

// overridden is the check of a variable that sets the field setting
// returns: an option that set another value overrode it.
func overridden(setting func(*Config) any) func(c, env *config, from string) string {
	return func(c, env *config, from string) string {
		if v := setting(&c.Config); v != setting(&env.Config) {
			return fmt.Sprintf("an option overrides it: %v is in force", v)
		}
		return ""
	}
}

// sourceChosen is the check of a variable that chooses the source, which
// fromEnv tells is still the variables' choice.
func sourceChosen(fromEnv func(*config) bool) func(c, env *config, from string) string {
	return func(c, _ *config, from string) string {
		if fromEnv(c) {
			return ""
		}
		return "the options chose " + from
	}
}

// address is the check of a part of a sync server's address: a socket
// path wins over the rest, and a target URI (unless it is the part) over a
// host and port.
func address(targetURI bool, next func(c, env *config, from string) string) func(c, env *config, from string) string {
	return func(c, env *config, from string) string {
		switch {
		case c.SocketPath != "":
			return "the socket path " + c.SocketPath + " is used instead"
		case c.TargetURI != "" && !targetURI:
			return "the target URI " + c.TargetURI + " is used instead"
		}
		return next(c, env, from)
	}
}

func portUnused(c, env *config, _ string) string {
	switch {
	case c.Port == env.Port:
		return ""
	case env.syncPort != 0 && c.Port == env.syncPort:
		return EnvSyncPort + " is used instead, as the in-process resolver's port"
	}
	return fmt.Sprintf("an option overrides it: port %d is in force", c.Port)
}

func syncPortUnused(c, env *config, _ string) string {
	if c.Port == env.syncPort {
		return ""
	}
	return fmt.Sprintf("an option overrides it: port %d is in force", c.Port)
}

// certPathUnused is the check of the CA file, which a sync server with
// TLS and a URL read.
func certPathUnused(c, env *config, from string) string {
	switch c.kindInForce() {
	case kindURL:
	case kindServer:
		if !c.TLS {
			return "TLS is off"
		}
	default:
		return "the flags come from " + from + ", which does not read it"
	}
	return overridden(func(c *Config) any { return c.CertPath })(c, env, from)
}

// unusedVar is a variable that is set but not in force, and why.
type unusedVar struct{ name, value, reason string }

// unusedEnv lists, in the order of envChecks, the variables that are set
// but not in force; none when the variables were not applied (WithoutEnv
// without FromEnv).
func (p *Provider) unusedEnv() []unusedVar {
	c := &p.cfg
	if !c.envApplied {
		return nil
	}
	env := defaultConfig()
	env.applyEnv() // the values as the variables set them
	var out []unusedVar
	for _, check := range envChecks {
		value, set := os.LookupEnv(check.name)
		if !set {
			continue
		}
		var why string
		if check.reads != kindNone && check.reads != c.kindInForce() {
			why = "the flags come from " + p.origin.description + ", which does not read it"
		} else {
			why = check.unused(c, &env, p.origin.description)
		}
		if why != "" {
			out = append(out, unusedVar{check.name, value, why})
		}
	}
	return out
}

// logUnusedEnv logs each variable that is set but not in force.
func (p *Provider) logUnusedEnv() {
	for _, u := range p.unusedEnv() {
		p.log.Info("environment variable not used", slog.String("variable", u.name), slog.String("value", u.value), slog.String("reason", u.reason))
	}
}

// kindInForce is the kind of source the configuration reads from.
func (c *config) kindInForce() sourceKind {
	switch {
	case c.source != nil || c.flags != nil:
		return kindMemory
	case c.URL != "":
		return kindURL
	case c.Resolver == ResolverFile:
		return kindFile
	}
	return kindServer
}
