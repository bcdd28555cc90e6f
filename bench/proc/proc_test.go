package proc_test

import (
	"os"
	"os/exec"
	"slices"
	"testing"

	"kubevirt.dev/virt/bench/proc"
)

func TestRSSOfSelf(t *testing.T) {
	rss, err := proc.RSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss < proc.MiB || rss > 4096*proc.MiB {
		t.Fatalf("RSS %d bytes is not believable", rss)
	}
	if proc.Comm(os.Getpid()) == "" {
		t.Fatal("no comm")
	}
}

func TestCPUOfSelfGrows(t *testing.T) {
	a, err := proc.CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := range 300_000_000 {
		x += i
	}
	_ = x
	b, err := proc.CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if b <= a {
		t.Fatalf("CPU did not grow: %v then %v", a, b)
	}
}

func TestChildrenAndCommandLineFindAChild(t *testing.T) {
	cmd := exec.CommandContext(t.Context(), "sleep", "30.5")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sleep: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if got := proc.Children(os.Getpid()); !slices.Contains(got, cmd.Process.Pid) {
		t.Errorf("Children(self) = %v, want %d among them", got, cmd.Process.Pid)
	}
	got := proc.WithCommandLine(func(args []string) bool { return slices.Equal(args, []string{"sleep", "30.5"}) })
	if !slices.Equal(got, []int{cmd.Process.Pid}) {
		t.Errorf("WithCommandLine(sleep 30.5) = %v, want [%d]", got, cmd.Process.Pid)
	}
}

func TestSnapshotHasSelf(t *testing.T) {
	u := proc.Snapshot()
	self, ok := u[os.Getpid()]
	if !ok || self.Comm != proc.Comm(os.Getpid()) || self.CPU < 0 || self.Start <= 0 {
		t.Fatalf("own entry %+v (found %v)", self, ok)
	}
}
