package flagdtest

import (
	"strings"
	"testing"
	"time"
)

func TestProcessOutputAndEnd(t *testing.T) {
	dir := t.TempDir()
	p := StartProcess(t, "sh", dir, "/bin/sh", "-c", `pwd; echo ready; exec sleep 60`)
	p.WaitUntil(t, 10*time.Second, func() bool { return strings.Contains(p.Output(), "ready") })
	if p.State() != nil {
		t.Fatalf("State %v while the process runs", p.State())
	}
	if !strings.HasPrefix(p.Output(), dir+"\n") {
		t.Errorf("output %q: not run in %s", p.Output(), dir)
	}
	t.Run("ends", func(t *testing.T) {
		q := StartProcess(t, "false", "", "/bin/sh", "-c", "exit 3")
		select {
		case <-q.Exited():
		case <-time.After(10 * time.Second):
			t.Fatal("sh -c 'exit 3' did not end")
		}
		if st := q.State(); st == nil || st.ExitCode() != 3 {
			t.Errorf("State %v, want exit status 3", st)
		}
	})
}
