package framework

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// logs are two serial logs of one guest: the pod it booted in and a
// migration's target, created later.
func logs(t *testing.T) (tk *Ticks, source, target *tickFile) {
	dir := t.TempDir()
	booted := time.Now().Add(-time.Hour)
	source = &tickFile{path: filepath.Join(dir, "source.log"), pod: "source", created: booted}
	target = &tickFile{path: filepath.Join(dir, "target.log"), pod: "target", created: booted.Add(time.Minute)}
	return &Ticks{ticks: map[int]Tick{}}, source, target
}

func appendTo(t *testing.T, f *tickFile, s string) {
	t.Helper()
	fd, err := os.OpenFile(f.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	if _, err := fd.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// poll is one round of FollowTicks' loop.
func poll(tk *Ticks, files ...*tickFile) {
	for _, f := range files {
		tk.readFrom(f)
	}
	tk.joinSplitLines(files)
}

func seen(tk *Ticks) map[int]string {
	out := map[int]string{}
	for n, tick := range tk.ticks {
		out[n] = tick.Pod
	}
	return out
}

// TestTicksJoinALineSplitByAMigration: the guest paused halfway through
// heartbeat 2; the target's QEMU printed the rest.
func TestTicksJoinALineSplitByAMigration(t *testing.T) {
	tk, source, target := logs(t)
	appendTo(t, source, "SeaBIOS (version 1.16)\r\nVIRT-GUEST-TICK 1 4.10\r\nVIRT-GUEST-TICK 2 4.")
	poll(tk, source, target)
	appendTo(t, target, "20\r\nVIRT-GUEST-TICK 3 4.30\r\n")
	poll(tk, source, target)
	want := map[int]string{1: "source", 2: "target", 3: "target"}
	if got := seen(tk); !maps.Equal(got, want) {
		t.Errorf("ticks %v, want %v", got, want)
	}
	if _, _, err := tk.Continuity(1, 3); err != nil {
		t.Error(err)
	}
}

// TestTicksJoinReadsTheSourceToItsEnd: the source's last bytes reached its
// log after the follower's last read of it; joining what it had read
// would make heartbeat 1 out of 15.
func TestTicksJoinReadsTheSourceToItsEnd(t *testing.T) {
	tk, source, target := logs(t)
	appendTo(t, source, "boot\r\nVIRT-GUEST-TICK 14 4.10\r\nVIRT-GUEST-TICK 1")
	poll(tk, source, target)
	appendTo(t, source, "5 4.")
	appendTo(t, target, "20\r\n")
	tk.readFrom(target)
	tk.joinSplitLines([]*tickFile{target, source})
	if got, want := seen(tk), (map[int]string{14: "source", 15: "target"}); !maps.Equal(got, want) {
		t.Errorf("ticks %v, want %v", got, want)
	}
}

// TestTicksDoNotJoinOtherwise: a line being printed in the newer pod does
// not join the older pod's first line, and a target whose first line is
// no heartbeat's end leaves the tick missing, with the seams in the error.
func TestTicksDoNotJoinOtherwise(t *testing.T) {
	tk, source, target := logs(t)
	appendTo(t, source, "\r\nVIRT-GUEST-TICK 1 4.10\r\nVIRT-GUEST-TICK 2 4.")
	appendTo(t, target, "garbage\r\nVIRT-GUEST-TICK 3 4.30\r\nVIRT-GUEST-TICK 4 4.4")
	poll(tk, source, target)
	if got, want := seen(tk), (map[int]string{1: "source", 3: "target"}); !maps.Equal(got, want) {
		t.Errorf("ticks %v, want %v", got, want)
	}
	_, _, err := tk.Continuity(1, 3)
	if err == nil || !strings.Contains(err.Error(), "[2]") || !strings.Contains(err.Error(), `pod target begins "garbage\r"`) {
		t.Errorf("Continuity: %v, want heartbeat 2 missing and the target's first line named", err)
	}
}
