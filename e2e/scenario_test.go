package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"github.com/open-feature/go-sdk/openfeature"
	"github.com/open-feature/go-sdk/openfeature/isolated"
	"google.golang.org/grpc/codes"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/internal/logtest"
)

// Provider settings for every scenario. The testbed's lifecycle scenarios
// lose the connection for 1s, 3s, 5s or 6s and expect STALE at once, ERROR
// after 3s ("ready -> error -> ready") but none after 1s, and READY when it
// returns. flagd's defaults (10s grace, 1s-5s backoff) would report no
// ERROR within a 3s loss and could take seconds to notice the server is
// back; a 2s grace period sits between the 1s and 3s losses, and a short
// backoff finds a restarted server within a fraction of a second.
const (
	gracePeriod     = 2 * time.Second
	retryBackoff    = 100 * time.Millisecond
	retryBackoffMax = 500 * time.Millisecond

	// initDeadline replaces the 500ms default where the scenario sets none:
	// the first flag set arrives in milliseconds, but a loaded CI machine
	// running the race detector must not turn that into a failed Init.
	// Scenarios about the deadline set their own.
	initDeadline = 5 * time.Second

	// setProviderTimeout bounds waiting for Init beyond its own deadline.
	setProviderTimeout = 30 * time.Second

	// eventSlack is how long an event may take once whatever should cause
	// it has happened, for example once a lost connection is back.
	eventSlack = 5 * time.Second
)

type mode string

const (
	modeInProcess mode = "in-process"
	modeFile      mode = "file"
)

// scenario is the state of one running scenario; every scenario starts from
// a new one, with its own directory, server or file, OpenFeature API
// instance and provider.
type scenario struct {
	run *suiteRun
	dir string
	ctx context.Context // lives until the scenario's cleanup
	end context.CancelFunc

	savedEnv map[string]*string // what the process had before the scenario

	settings []setting
	// selectedInFile: the scenario's flag file holds the flag set its
	// selector names, so the provider is given no selector.
	selectedInFile bool

	config    flagsnap.Config
	configErr error
	configSet bool

	api      *openfeature.EvaluationAPI
	client   *openfeature.Client
	provided bool
	lp       *launchpad
	logs     *logtest.Buffer

	flag   *flagRequest
	attrs  map[string]any
	tkey   string
	result *evaluation

	events *eventLog
}

// newScenario gives the scenario an OpenFeature API instance of its own:
// shutting it down stops the provider and its event handling before the
// next scenario starts, where replacing the provider of a shared instance
// would shut the old one down in the background.
func newScenario(run *suiteRun) *scenario {
	api := isolated.NewAPI()
	return &scenario{
		run:    run,
		api:    api,
		client: api.NewClient(),
		attrs:  map[string]any{},
		events: newEventLog(),
		logs:   &logtest.Buffer{},
	}
}

// start gives the scenario its directory and a clean FLAGD_* environment,
// so that nothing set outside the test or by an earlier scenario leaks in.
func (s *scenario) start() error {
	s.ctx, s.end = context.WithCancel(context.Background())
	s.savedEnv = map[string]*string{}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "FLAGD_") && name != testbedEnv {
			if err := s.setenv(name, nil); err != nil {
				return err
			}
		}
	}
	dir, err := s.run.dirs.next()
	s.dir = dir
	return err
}

// cleanup undoes everything the scenario did, whatever step it stopped at.
func (s *scenario) cleanup() error {
	var errs []error
	if s.lp != nil {
		// The provider is shut down while its server or file is still
		// there, so that it does not first go through losing them.
		s.lp.cancelRestore()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	errs = append(errs, s.api.Shutdown(ctx))
	cancel()
	if s.lp != nil {
		s.lp.close()
		errs = append(errs, s.lp.err())
	}
	if s.end != nil {
		s.end()
	}
	for name, v := range s.savedEnv {
		if v == nil {
			errs = append(errs, os.Unsetenv(name))
		} else {
			errs = append(errs, os.Setenv(name, *v))
		}
	}
	if s.dir != "" {
		errs = append(errs, os.RemoveAll(s.dir))
	}
	return errors.Join(errs...)
}

// setenv sets (or with nil, unsets) a variable for this scenario only.
func (s *scenario) setenv(name string, v *string) error {
	if _, saved := s.savedEnv[name]; !saved {
		if old, ok := os.LookupEnv(name); ok {
			s.savedEnv[name] = &old
		} else {
			s.savedEnv[name] = nil
		}
	}
	if v == nil {
		return os.Unsetenv(name)
	}
	return os.Setenv(name, *v)
}

// register binds the step texts of the testbed's features for one scenario.
func (s *scenario) register(sc *godog.ScenarioContext) {
	sc.Before(func(ctx context.Context, _ *godog.Scenario) (context.Context, error) {
		return ctx, s.start()
	})
	sc.After(func(ctx context.Context, _ *godog.Scenario, err error) (context.Context, error) {
		if err != nil && s.logs.Len() > 0 {
			if t := godog.T(ctx); t != nil {
				t.Logf("provider log:\n%s", s.logs.String())
			}
		}
		return ctx, s.cleanup()
	})

	// Configuration.
	sc.Step(`^an option "([^"]*)" of type "([^"]*)" with value "([^"]*)"$`, s.anOption)
	sc.Step(`^an environment variable "([^"]*)" with value "([^"]*)"$`, s.anEnvironmentVariable)
	sc.Step(`^a config was initialized$`, s.aConfigWasInitialized)
	sc.Step(`^the option "([^"]*)" of type "([^"]*)" should have the value "([^"]*)"$`, s.theOptionShouldHaveTheValue)
	sc.Step(`^we should have an error$`, s.weShouldHaveAnError)

	// Provider and launchpad.
	sc.Step(`^an? (\S+) flagd provider$`, s.aFlagdProvider)
	sc.Step(`^the connection is lost for (\d+)s$`, s.theConnectionIsLostFor)
	sc.Step(`^the flag was modified$`, s.theFlagWasModified)

	// Flags, context and evaluation.
	sc.Step(`^an? (Boolean|String|Integer|Float|Object)-flag with key "([^"]*)" and a default value "(.*)"$`, s.aFlag)
	sc.Step(`^a context containing a key "([^"]*)", with type "([^"]*)" and with value "(.*)"$`, s.aContextKey)
	sc.Step(`^a context containing a nested property with outer key "([^"]*)" and inner key "([^"]*)", with value "(.*)"$`, s.aNestedContextKey)
	sc.Step(`^a context containing a targeting key with value "(.*)"$`, s.aTargetingKey)
	sc.Step(`^the flag was evaluated with details$`, s.theFlagWasEvaluated)
	sc.Step(`^the resolved details value should be "(.*)"$`, s.theValueShouldBe)
	sc.Step(`^the reason should be "([^"]*)"$`, s.theReasonShouldBe)
	sc.Step(`^the error-code should be "([^"]*)"$`, s.theErrorCodeShouldBe)
	sc.Step(`^the variant should be "([^"]*)"$`, s.theVariantShouldBe)
	sc.Step(`^the resolved metadata should contain$`, s.theMetadataShouldContain)
	sc.Step(`^the resolved metadata is empty$`, s.theMetadataIsEmpty)

	// Events and client state.
	sc.Step(`^an? (\w+) event handler$`, s.anEventHandler)
	sc.Step(`^the (\w+) event handler should have been executed$`, s.theHandlerShouldHaveRun)
	sc.Step(`^the (\w+) event handler should have been executed within (\d+)ms$`, s.theHandlerShouldHaveRunWithin)
	sc.Step(`^an? (\w+) event was fired$`, s.anEventWasFired)
	sc.Step(`^the flag should be part of the event payload$`, s.theFlagShouldBeInThePayload)
	sc.Step(`^the client should be in fatal state$`, s.theClientShouldBeFatal)
}

// variant is one of the ways the scenarios reach the launchpad.
type variant struct {
	config      string     // launchpad configuration
	socket      bool       // unix socket instead of a loopback port
	unavailable bool       // nothing behind the address
	refuse      codes.Code // the server refuses every stream
}

var variants = map[string]variant{
	"stable":      {config: "default"},
	"ssl":         {config: "ssl"},
	"socket":      {config: "default", socket: true},
	"unavailable": {unavailable: true},
	"forbidden":   {config: "default", refuse: codes.PermissionDenied},
	"metadata":    {config: "metadata"},
	"syncpayload": {config: "sync-payload"},
}

func (s *scenario) aFlagdProvider(name string) error {
	v, ok := variants[name]
	if !ok {
		return fmt.Errorf("unknown provider %q", name)
	}
	if s.provided {
		return errors.New("the scenario already has a provider")
	}
	s.provided = true
	c, ok := s.run.tb.configs[v.config]
	if !v.unavailable && !ok {
		return fmt.Errorf("provider %q: no launchpad configuration %q", name, v.config)
	}

	opts := []flagsnap.Option{
		flagsnap.WithFractionalVersion(s.run.version),
		flagsnap.WithRetryGracePeriod(gracePeriod),
		flagsnap.WithDeadline(initDeadline),
		flagsnap.WithLogger(s.logs.Logger()),
	}
	port := 0
	switch s.run.mode {
	case modeInProcess:
		opts = append(opts,
			flagsnap.WithResolver(flagsnap.ResolverInProcess),
			flagsnap.WithRetryBackoff(retryBackoff, retryBackoffMax))
		switch {
		case v.unavailable:
			p, err := unusedPort()
			if err != nil {
				return err
			}
			port = p
			opts = append(opts, flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(port))
		default:
			setup := serverSetup{tls: c.ServerCertPath != "", refuse: v.refuse}
			if v.socket {
				setup.socket = filepath.Join(s.dir, "flagd.sock")
			}
			lp, err := startServer(s.run.tb, c, setup)
			if err != nil {
				return err
			}
			s.lp = lp
			if v.socket {
				opts = append(opts, flagsnap.WithSocketPath(setup.socket))
			} else {
				port = lp.srv.Port()
				opts = append(opts, flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(port))
			}
			if setup.tls {
				// The testbed's server certificate is signed by its
				// custom CA, whose certificate clients are given as
				// certPath. Here the test server signs its own with a CA
				// it generates, and the provider is given that CA's file:
				// the same check (TLS, verified against a CA file, host
				// name included) without reading a private key from the
				// testbed.
				ca, err := lp.srv.WriteCACert(s.dir)
				if err != nil {
					return err
				}
				opts = append(opts, flagsnap.WithTLS(ca))
			}
		}
	case modeFile:
		// A file has no transport: TLS, sockets and target URIs all read
		// the same file, and a missing file is what "unavailable" means.
		switch {
		case v.refuse != codes.OK:
			return fmt.Errorf("provider %q has no file equivalent", name)
		case v.unavailable:
			opts = append(opts, flagsnap.WithFile(filepath.Join(s.dir, "missing.json")))
		default:
			lp, err := writeFlagFile(s.run.tb, c, s.dir, s.selector())
			if err != nil {
				return err
			}
			s.lp = lp
			// The file holds the selected flag set alone, and a file
			// provider refuses a selector, which would select nothing.
			s.selectedInFile = true
			opts = append(opts, flagsnap.WithFile(lp.path))
		}
	}
	scenarioOpts, err := s.options(port)
	if err != nil {
		return err
	}
	p, err := flagsnap.NewProvider(append(opts, scenarioOpts...)...)
	if err != nil {
		return err
	}
	if v.unavailable || v.refuse != codes.OK {
		// The scenario times the error event from here.
		return s.api.SetProvider(s.ctx, p)
	}
	ctx, cancel := context.WithTimeout(s.ctx, setProviderTimeout)
	defer cancel()
	return s.api.SetProviderAndWait(ctx, p)
}

// selector is the flag set the scenario asks for, "" for the default one.
func (s *scenario) selector() string {
	sel := ""
	for _, st := range s.settings {
		if st.name == "selector" {
			sel = st.value.(string)
		}
	}
	return sel
}

// unusedPort is a loopback port with nothing listening on it.
func unusedPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

func (s *scenario) theConnectionIsLostFor(seconds int) error {
	if s.lp == nil {
		return errors.New("no server or flag file to take away")
	}
	return s.lp.loseConnection(time.Duration(seconds) * time.Second)
}

func (s *scenario) theFlagWasModified() error {
	if s.lp == nil {
		return errors.New("no server or flag file to change")
	}
	return s.lp.change()
}
