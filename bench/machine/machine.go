package machine

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"

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
	m.CPU = firstField("/proc/cpuinfo", "model name")
	if kb := firstField("/proc/meminfo", "MemTotal"); kb != "" {
		var n int64
		for _, c := range strings.TrimSuffix(kb, " kB") {
			if c >= '0' && c <= '9' {
				n = n*10 + int64(c-'0')
			}
		}
		m.MemoryMiB = n / 1024
	}
	m.Kernel = readTrim("/proc/sys/kernel/osrelease")
	m.LoadAverage = strings.Join(strings.Fields(readTrim("/proc/loadavg"))[:3], " ")
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

func readTrim(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
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
