package migration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

func fmtCase(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// tickLine is the test guest's heartbeat (virt.tick=1, hack/build-guest.sh).
var tickLine = regexp.MustCompile(`VIRT-GUEST-TICK ([0-9]+) `)

// lastTick is the highest heartbeat number in a serial log, 0 when none.
func lastTick(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	last := 0
	for _, m := range tickLine.FindAllSubmatch(b, -1) {
		if n, err := strconv.Atoi(string(m[1])); err == nil && n > last {
			last = n
		}
	}
	return last
}

// waitTick waits until the serial log at path shows a heartbeat above n
// and returns the highest one.
func waitTick(ctx context.Context, path string, n int, timeout time.Duration) (int, error) {
	var last int
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		last = lastTick(path)
		return last > n, nil
	})
	if err != nil {
		return last, fmt.Errorf("no heartbeat above %d in %s within %s (last %d): %w", n, path, timeout, last, err)
	}
	return last, nil
}

// DirtyMarker is what the test guest prints once its dirtying loop
// (virt.dirty=N) has written all N MiB once: before it, the memory to move
// is not there yet.
const DirtyMarker = "VIRT-GUEST-DIRTY "

// waitSettled waits until the guest of case c, whose serial log is at
// path, is ready to be moved: its heartbeat past settleTicks and, dirtying,
// its N MiB written. It returns the last heartbeat.
func waitSettled(ctx context.Context, path string, c Case, timeout time.Duration) (int, error) {
	if c.DirtyMiB > 0 {
		want := fmt.Sprintf("%s%d", DirtyMarker, c.DirtyMiB)
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
			b, err := os.ReadFile(path)
			return err == nil && bytes.Contains(b, []byte(want)), nil
		})
		if err != nil {
			return 0, fmt.Errorf("no %q in %s within %s: %w", want, path, timeout, err)
		}
	}
	return waitTick(ctx, path, settleTicks, timeout)
}
