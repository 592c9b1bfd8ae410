package flagdtest

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap/internal/logtest"
	"github.com/flagsnap/flagsnap/internal/loopback"
)

const (
	// killDelay is how long a process may take to end after its interrupt
	// before it is killed.
	killDelay = 5 * time.Second
	// stopWait bounds the wait for a process to end once its test has
	// ended.
	stopWait = 30 * time.Second
	// pollEvery is how often WaitUntil asks.
	pollEvery = 50 * time.Millisecond
)

// Process is a program a test runs until the test ends.
type Process struct {
	name   string
	cmd    *exec.Cmd
	out    logtest.Buffer
	exited chan struct{}
}

// Kill ends the process at once, as a crash would, and waits for it.
func (p *Process) Kill(tb testing.TB) {
	tb.Helper()
	_ = p.cmd.Process.Kill()
	select {
	case <-p.exited:
	case <-time.After(stopWait):
		tb.Fatalf("%s did not end within %v of being killed", p.name, stopWait)
	}
}

// StartProcess runs bin with args, in dir unless that is "", until the test
// ends: then it is interrupted, killed if it has not ended 5 seconds later,
// and waited for, and its output is logged if the test failed. The test
// fails if the process does not end within 30 seconds of that. name is the
// process in messages.
func StartProcess(tb testing.TB, name, dir, bin string, args ...string) *Process {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &Process{name: name, exited: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, bin, args...)
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	p.cmd.Cancel = func() error { return p.cmd.Process.Signal(os.Interrupt) }
	p.cmd.WaitDelay = killDelay
	if err := p.cmd.Start(); err != nil {
		cancel()
		tb.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	tb.Cleanup(func() {
		cancel()
		select {
		case <-p.exited:
		case <-time.After(stopWait):
			tb.Errorf("%s did not end within %v", name, stopWait)
		}
		if tb.Failed() {
			tb.Logf("%s %s said:\n%s", name, strings.Join(args, " "), p.out.String())
		}
	})
	return p
}

// Output is what the process has written so far, to stdout and stderr.
func (p *Process) Output() string { return p.out.String() }

// Exited is closed once the process has ended.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// State is how the process ended; nil until Exited is closed.
func (p *Process) State() *os.ProcessState {
	select {
	case <-p.exited:
		return p.cmd.ProcessState
	default:
		return nil
	}
}

// WaitUntil asks ready every 50 milliseconds until it holds, and fails the
// test, with the process's output, when timeout passes first or the
// process ends first.
func (p *Process) WaitUntil(tb testing.TB, timeout time.Duration, ready func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !ready() {
		select {
		case <-p.exited:
			tb.Fatalf("%s ended before answering: %v\n%s", p.name, p.cmd.ProcessState, p.Output())
		case <-time.After(pollEvery):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s did not answer within %v\n%s", p.name, timeout, p.Output())
		}
	}
}

// Daemon is a flagd daemon a test runs until it ends.
type Daemon struct {
	*Process
	// The loopback ports of flagd's services: flag evaluation (-p), OFREP
	// (-r), sync (-g) and management (-m).
	Port, OFREPPort, SyncPort, ManagementPort int

	bin, dir string
	args     []string
}

// Start runs `bin start` (bin a flagd daemon) with its four services on
// free loopback ports, then args, among them its sources (-f file:PATH),
// in dir unless that is "" (a relative file: URI is read from there), until
// the test ends, as StartProcess does. It does not wait for flagd to
// listen or to read its sources: that is the caller's WaitUntil.
func Start(tb testing.TB, bin, dir string, args ...string) *Daemon {
	tb.Helper()
	ports := loopback.FreePorts(tb, 4)
	d := &Daemon{Port: ports[0], OFREPPort: ports[1], SyncPort: ports[2], ManagementPort: ports[3], bin: bin, dir: dir}
	d.args = append([]string{"start",
		"-p", strconv.Itoa(d.Port), "-r", strconv.Itoa(d.OFREPPort),
		"-g", strconv.Itoa(d.SyncPort), "-m", strconv.Itoa(d.ManagementPort)}, args...)
	d.Process = StartProcess(tb, "flagd", dir, bin, d.args...)
	return d
}

// Restart runs the daemon again, on the same ports with the same
// arguments, as a restart or a rollout does, once its process has ended
// (Kill).
func (d *Daemon) Restart(tb testing.TB) {
	tb.Helper()
	d.Process = StartProcess(tb, "flagd", d.dir, d.bin, d.args...)
}

// OFREPURL is the base URL of flagd's OFREP service, http://127.0.0.1:PORT.
func (d *Daemon) OFREPURL() string { return "http://" + addr(d.OFREPPort) }

// SyncAddr is the address of flagd's sync service, 127.0.0.1:PORT.
func (d *Daemon) SyncAddr() string { return addr(d.SyncPort) }

func addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }
