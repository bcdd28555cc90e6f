package machine

import (
	"os"
	"strings"
	"testing"

	"github.com/prometheus/procfs"
)

func TestDescribeKernelReadsThisHost(t *testing.T) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		t.Fatalf("read /proc: %v", err)
	}
	var m Machine
	describeKernel(&m, fs)
	release, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	if m.Kernel != strings.TrimSpace(string(release)) {
		t.Errorf("Kernel = %q, /proc says %q", m.Kernel, release)
	}
	if m.CPU == "" || m.MemoryMiB <= 0 || len(strings.Fields(m.LoadAverage)) != 3 {
		t.Errorf("CPU %q, MemoryMiB %d, LoadAverage %q: not read", m.CPU, m.MemoryMiB, m.LoadAverage)
	}
}
