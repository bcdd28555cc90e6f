package machine

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/prometheus/procfs"

	"kubevirt.dev/virt/launcher/kvm"
)

// Machine is the host.
type Machine struct {
	CPU        string
	Cores      int
	MemoryMiB  int64
	Kernel     string
	OS         string
	Go         string
	Kubernetes string
	// Packages maps a Debian package to its installed version.
	Packages map[string]string
	// LoadAverage at the start of the run (1, 5, 15 minutes).
	LoadAverage string
	// Virtualization is "TCG" unless /dev/kvm exists.
	Virtualization string
}

// Describe reads the host; fields it cannot read stay empty.
func Describe(ctx context.Context) (Machine, error) {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version(), Packages: map[string]string{}}
	if fs, err := procfs.NewDefaultFS(); err == nil {
		describeKernel(&m, fs)
	}
	m.OS = firstField("/etc/os-release", "PRETTY_NAME")
	// The launcher's own test, so the report says what the guests ran on.
	if ok, why := kvm.Usable(); ok {
		m.Virtualization = "KVM"
	} else {
		m.Virtualization = "TCG (software emulation): " + why
	}
	for _, p := range []string{"libvirt0", "qemu-system-x86", "containerd"} {
		out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${Version}", p).Output()
		if err == nil {
			m.Packages[p] = strings.TrimSpace(string(out))
		}
	}
	return m, nil
}

// describeKernel fills in what /proc says: the CPU's model, the memory,
// the kernel's release and the load average.
func describeKernel(m *Machine, fs procfs.FS) {
	if cpus, err := fs.CPUInfo(); err == nil && len(cpus) > 0 {
		m.CPU = cpus[0].ModelName
	}
	if mem, err := fs.Meminfo(); err == nil && mem.MemTotalBytes != nil {
		m.MemoryMiB = int64(*mem.MemTotalBytes >> 20)
	}
	if release, err := fs.SysctlStrings("kernel.osrelease"); err == nil {
		m.Kernel = strings.Join(release, " ")
	}
	// The kernel prints the load with two decimals: so does the report.
	if load, err := fs.LoadAvg(); err == nil {
		m.LoadAverage = fmt.Sprintf("%.2f %.2f %.2f", load.Load1, load.Load5, load.Load15)
	}
}

// firstField returns the value of the first "key: value" or key=value line.
func firstField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, key) {
			continue
		}
		rest := strings.TrimSpace(strings.TrimPrefix(line, key))
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, ":"), "=")
		return strings.Trim(strings.TrimSpace(rest), `"`)
	}
	return ""
}
