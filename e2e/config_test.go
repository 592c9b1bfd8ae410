package e2e

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/flagsnap/flagsnap"
)

// setting is one "an option ... of type ... with value ..." step, its value
// read as the option's type.
type setting struct {
	name  string
	value any
}

// optionDef ties an option of flagd's provider configuration table to
// flagsnap: its type in the table, how a value becomes a flagsnap option,
// and where Config shows it. apply gets the scenario's other settings and
// the configuration the environment alone gives, for options flagsnap
// takes in pairs.
type optionDef struct {
	typ   string
	apply func(v any, o optionContext) ([]flagsnap.Option, error)
	get   func(c flagsnap.Config) any // nil: flagsnap has no such setting
}

type optionContext struct {
	others map[string]any  // the scenario's last value of each option
	base   flagsnap.Config // what the environment alone gives
}

// millis is the scenario's value of a *Ms option, or fallback.
func (o optionContext) millis(name string, fallback time.Duration) time.Duration {
	if v, ok := o.others[name].(int64); ok {
		return time.Duration(v) * time.Millisecond
	}
	return fallback
}

// Most options take one value and show it in one Config field.
func stringOption(with func(string) flagsnap.Option, get func(flagsnap.Config) string) optionDef {
	return optionDef{typ: "String",
		apply: func(v any, _ optionContext) ([]flagsnap.Option, error) {
			return []flagsnap.Option{with(v.(string))}, nil
		},
		get: func(c flagsnap.Config) any { return get(c) }}
}

// durationOption reads a whole number of unit, as the table's *Ms options
// and retryGracePeriod (seconds) are.
func durationOption(typ string, unit time.Duration, with func(time.Duration) flagsnap.Option, get func(flagsnap.Config) time.Duration) optionDef {
	return optionDef{typ: typ,
		apply: func(v any, _ optionContext) ([]flagsnap.Option, error) {
			return []flagsnap.Option{with(time.Duration(v.(int64)) * unit)}, nil
		},
		get: func(c flagsnap.Config) any { return int64(get(c) / unit) }}
}

func ignoredOption(typ string) optionDef {
	return optionDef{typ: typ, apply: func(any, optionContext) ([]flagsnap.Option, error) { return nil, nil }}
}

var optionDefs = map[string]optionDef{
	"resolver": {typ: "ResolverType",
		apply: func(v any, _ optionContext) ([]flagsnap.Option, error) {
			return []flagsnap.Option{flagsnap.WithResolver(v.(flagsnap.Resolver))}, nil
		},
		get: func(c flagsnap.Config) any { return c.Resolver }},
	"port": {typ: "Integer",
		apply: func(v any, _ optionContext) ([]flagsnap.Option, error) {
			return []flagsnap.Option{flagsnap.WithPort(int(v.(int64)))}, nil
		},
		get: func(c flagsnap.Config) any { return int64(c.Port) }},
	// flagsnap takes the CA file together with TLS: WithTLS(caFile).
	"tls": {typ: "Boolean",
		apply: func(v any, o optionContext) ([]flagsnap.Option, error) {
			if !v.(bool) {
				if o.base.TLS {
					return nil, errors.New("flagsnap has no option to turn off TLS that the environment turned on")
				}
				return nil, nil
			}
			ca, ok := o.others["certPath"].(string)
			if !ok {
				ca = o.base.CertPath
			}
			return []flagsnap.Option{flagsnap.WithTLS(ca)}, nil
		},
		get: func(c flagsnap.Config) any { return c.TLS }},
	"certPath": stringOption(flagsnap.WithTLS, func(c flagsnap.Config) string { return c.CertPath }),
	// flagsnap sets both backoff bounds at once; the one the scenario does
	// not give keeps the value the environment gives it.
	"retryBackoffMs": {typ: "Integer",
		apply: func(v any, o optionContext) ([]flagsnap.Option, error) {
			return []flagsnap.Option{flagsnap.WithRetryBackoff(time.Duration(v.(int64))*time.Millisecond,
				o.millis("retryBackoffMaxMs", o.base.RetryBackoffMax))}, nil
		},
		get: func(c flagsnap.Config) any { return int64(c.RetryBackoff / time.Millisecond) }},
	"retryBackoffMaxMs": {typ: "Integer",
		apply: func(v any, o optionContext) ([]flagsnap.Option, error) {
			return []flagsnap.Option{flagsnap.WithRetryBackoff(o.millis("retryBackoffMs", o.base.RetryBackoff),
				time.Duration(v.(int64))*time.Millisecond)}, nil
		},
		get: func(c flagsnap.Config) any { return int64(c.RetryBackoffMax / time.Millisecond) }},
	"fatalStatusCodes": {typ: "StringList",
		apply: func(v any, _ optionContext) ([]flagsnap.Option, error) {
			return []flagsnap.Option{flagsnap.WithFatalStatusCodeNames(v.([]string)...)}, nil
		},
		get: func(c flagsnap.Config) any { return nonNil(c.FatalStatusCodes) }},

	"host":                  stringOption(flagsnap.WithHost, func(c flagsnap.Config) string { return c.Host }),
	"targetUri":             stringOption(flagsnap.WithTargetURI, func(c flagsnap.Config) string { return c.TargetURI }),
	"socketPath":            stringOption(flagsnap.WithSocketPath, func(c flagsnap.Config) string { return c.SocketPath }),
	"selector":              stringOption(flagsnap.WithSelector, func(c flagsnap.Config) string { return c.Selector }),
	"providerId":            stringOption(flagsnap.WithProviderID, func(c flagsnap.Config) string { return c.ProviderID }),
	"offlineFlagSourcePath": stringOption(flagsnap.WithFile, func(c flagsnap.Config) string { return c.OfflineFlagSourcePath }),

	"deadlineMs": durationOption("Integer", time.Millisecond, flagsnap.WithDeadline,
		func(c flagsnap.Config) time.Duration { return c.Deadline }),
	"streamDeadlineMs": durationOption("Integer", time.Millisecond, flagsnap.WithStreamDeadline,
		func(c flagsnap.Config) time.Duration { return c.StreamDeadline }),
	"retryGracePeriod": durationOption("Integer", time.Second, flagsnap.WithRetryGracePeriod,
		func(c flagsnap.Config) time.Duration { return c.RetryGracePeriod }),
	"keepAliveTime": durationOption("Long", time.Millisecond, flagsnap.WithKeepAlive,
		func(c flagsnap.Config) time.Duration { return c.KeepAlive }),
	"offlinePollIntervalMs": durationOption("Integer", time.Millisecond, flagsnap.WithFilePollInterval,
		func(c flagsnap.Config) time.Duration { return c.OfflinePollInterval }),

	// flagd's evaluation cache belongs to its remote RPC resolver; an
	// in-process provider has nothing to cache, so scenarios that merely
	// switch it off run unchanged. Config has no such field to check.
	"cache":        ignoredOption("CacheType"),
	"maxCacheSize": ignoredOption("Integer"),
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// typedValue reads a scenario's value as the type the table names.
func typedValue(typ, raw string) (any, error) {
	switch typ {
	case "String":
		if raw == "null" {
			return "", nil
		}
		return raw, nil
	case "Integer", "Long":
		return strconv.ParseInt(raw, 10, 64)
	case "Boolean":
		return strconv.ParseBool(raw)
	case "ResolverType":
		return flagsnap.ParseResolver(raw)
	case "StringList":
		out := []string{}
		for part := range strings.SplitSeq(raw, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
		return out, nil
	case "CacheType":
		return raw, nil
	}
	return nil, fmt.Errorf("unknown option type %q", typ)
}

func lookupOption(name, typ string) (optionDef, error) {
	def, ok := optionDefs[name]
	if !ok {
		return def, fmt.Errorf("unknown option %q", name)
	}
	if def.typ != typ {
		return def, fmt.Errorf("option %q is of type %s, not %s", name, def.typ, typ)
	}
	return def, nil
}

func (s *scenario) anOption(name, typ, raw string) error {
	def, err := lookupOption(name, typ)
	if err != nil {
		return err
	}
	v, err := typedValue(def.typ, raw)
	if err != nil {
		return fmt.Errorf("option %q: %w", name, err)
	}
	s.settings = append(s.settings, setting{name: name, value: v})
	return nil
}

func (s *scenario) anEnvironmentVariable(name, value string) error {
	return s.setenv(name, &value)
}

// options turns the scenario's settings into flagsnap options, in the
// scenario's order. port replaces "<port>" in a target URI, the way the
// testbed's scenarios name the server's port.
func (s *scenario) options(port int) ([]flagsnap.Option, error) {
	// If the environment alone does not make a valid configuration,
	// flagd's defaults stand in for it.
	base, err := flagsnap.NewConfig()
	if err != nil {
		base = flagsnap.Config{
			RetryBackoff:    flagsnap.DefaultRetryBackoff,
			RetryBackoffMax: flagsnap.DefaultRetryBackoffMax,
		}
	}
	ctx := optionContext{others: map[string]any{}, base: base}
	for _, st := range s.settings {
		ctx.others[st.name] = st.value
	}

	var opts []flagsnap.Option
	for _, st := range s.settings {
		if st.name == "selector" && s.selectedInFile {
			continue
		}
		v := st.value
		if str, ok := v.(string); ok && strings.Contains(str, "<port>") {
			if port == 0 {
				return nil, fmt.Errorf("option %q names the server's port, and there is no TCP server", st.name)
			}
			v = strings.ReplaceAll(str, "<port>", strconv.Itoa(port))
		}
		o, err := optionDefs[st.name].apply(v, ctx)
		if err != nil {
			return nil, fmt.Errorf("option %q: %w", st.name, err)
		}
		opts = append(opts, o...)
	}
	return opts, nil
}

func (s *scenario) aConfigWasInitialized() error {
	opts, err := s.options(0)
	if err != nil {
		return err
	}
	s.config, s.configErr = flagsnap.NewConfig(opts...)
	s.configSet = true
	return nil
}

func (s *scenario) theOptionShouldHaveTheValue(name, typ, raw string) error {
	if !s.configSet {
		return errors.New("no config was initialized")
	}
	if s.configErr != nil {
		return fmt.Errorf("the config was not built: %w", s.configErr)
	}
	def, err := lookupOption(name, typ)
	if err != nil {
		return err
	}
	if def.get == nil {
		return fmt.Errorf("option %q belongs to flagd's remote RPC resolver, which flagsnap does not implement", name)
	}
	want, err := typedValue(typ, raw)
	if err != nil {
		return err
	}
	if got := def.get(s.config); !reflect.DeepEqual(got, want) {
		return fmt.Errorf("option %q is %#v, want %#v", name, got, want)
	}
	return nil
}

func (s *scenario) weShouldHaveAnError() error {
	if !s.configSet {
		return errors.New("no config was initialized")
	}
	if s.configErr == nil {
		return fmt.Errorf("the config was built without an error: %+v", s.config)
	}
	return nil
}
