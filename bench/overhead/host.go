package overhead

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/bench/podusr"
	"kubevirt.dev/virt/bench/proc"
	"kubevirt.dev/virt/bench/startup"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// measureHost runs the launcher binary on the host with the test guest,
// with its embedded libvirt or against a private libvirtd of its own.
func measureHost(ctx context.Context, env Env, private bool, timeout time.Duration) (m Measurement, err error) {
	setup := "virt-launcher + embedded libvirt (host, uid 107)"
	if private {
		setup = "virt-launcher + private libvirtd (host, uid 107)"
	}
	// Short paths: unix socket addresses are limited to 108 bytes.
	dir, err := os.MkdirTemp("", "vo-")
	if err != nil {
		return m, err
	}
	var started []*exec.Cmd
	defer func() {
		// Kill what was started and any QEMU of this directory; nothing
		// outlives the measurement.
		for _, pid := range qemuPIDs(dir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		for _, c := range started {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		os.RemoveAll(dir)
	}()
	for _, d := range []string{"p", "k", "g", "d", "v", "c", "e/libvirt", "r", "h", "x"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return m, err
		}
	}
	// The kernel and initrd in a directory of their own, offered by a
	// holder as the pod's kernel-boot container offers them (records in
	// the kernel-boot directory, the files read through the holder's
	// /proc/<pid>/root).
	kernel, initrd := filepath.Join(dir, "g", "vmlinuz"), filepath.Join(dir, "g", "initrd.gz")
	if err := copyFile(env.Guest.Kernel, kernel); err != nil {
		return m, err
	}
	if err := copyFile(env.Guest.Initrd, initrd); err != nil {
		return m, err
	}
	// One-letter XDG directories: libvirt puts a domain's guest-agent
	// socket at $XDG_CONFIG_HOME/libvirt/qemu/channel/target/domain-N-<name>/
	// org.qemu.guest_agent.0, and a UNIX socket path has at most 108 bytes.
	xdg := []string{"XDG_CONFIG_HOME=" + filepath.Join(dir, "e"), "XDG_RUNTIME_DIR=" + filepath.Join(dir, "r"),
		"XDG_CACHE_HOME=" + filepath.Join(dir, "h"), "HOME=" + filepath.Join(dir, "x")}
	if private {
		// As in the pod: QEMU's output to a file, no virtlogd.
		conf := "stdio_handler = \"file\"\n"
		if err := os.WriteFile(filepath.Join(dir, "e/libvirt/qemu.conf"), []byte(conf), 0o644); err != nil {
			return m, err
		}
	}
	if err := podusr.Chown(dir); err != nil {
		return m, err
	}
	if err := podusr.WriteUserFiles(dir); err != nil {
		return m, err
	}
	var libvirtd *exec.Cmd
	if private {
		libvirtd = podusr.Command(dir, "libvirtd")
		libvirtd.Env = append(os.Environ(), xdg...)
		libvirtd.Stdout, libvirtd.Stderr = io.Discard, io.Discard
		if err := libvirtd.Start(); err != nil {
			return m, fmt.Errorf("start libvirtd: %w", err)
		}
		started = append(started, libvirtd)
		sock := filepath.Join(dir, "r/libvirt/libvirt-sock")
		if err := waitFile(ctx, sock, time.Minute); err != nil {
			return m, fmt.Errorf("libvirtd's socket: %w", err)
		}
	}
	// QEMU's capabilities seeded as the launcher image seeds them when it
	// is built (docs/launcher.md "The capabilities seed"), before the
	// launcher whose memory is measured starts, and before the holder, which
	// ends when the first launcher it saw ends.
	seed := podusr.Command(dir, env.LauncherBinary, "--write-capabilities-seed", filepath.Join(dir, "c"))
	if out, err := seed.CombinedOutput(); err != nil {
		return m, fmt.Errorf("capabilities seed: %w: %s", err, out)
	}
	holder := podusr.Command(dir, env.ImagecopyBinary, "hold",
		kernel, layout.KernelBootRecord(filepath.Join(dir, "k"), layout.KernelName),
		initrd, layout.KernelBootRecord(filepath.Join(dir, "k"), layout.InitrdName), env.LauncherBinary)
	holder.Stdout, holder.Stderr = io.Discard, os.Stderr
	if err := holder.Start(); err != nil {
		return m, fmt.Errorf("start the kernel-boot holder: %w", err)
	}
	started = append(started, holder)
	vmi := startup.VMI("overhead-host")
	vmi.Namespace, vmi.UID = "bench", uuid.NewUUID()
	// No NIC: its tap is virt-handler's to prepare in a pod, and there is
	// no pod here.
	vmi.Spec.Domain.Devices.AutoattachPodInterface = ptr.To(false)
	virtv1.SetObjectDefaults_VirtualMachineInstance(vmi)
	privateDir := filepath.Join(dir, "p")
	args := []string{env.LauncherBinary, "--vmi-namespace", vmi.Namespace, "--vmi-name", vmi.Name, "--vmi-uid", string(vmi.UID),
		"--private-dir", privateDir, "--disks-dir", filepath.Join(dir, "d"), "--pvc-dir", filepath.Join(dir, "v"),
		"--kernel-boot-dir", filepath.Join(dir, "k"), "--kernel-boot-file", layout.KernelName, "--kernel-boot-file", layout.InitrdName,
		"--capabilities-seed-dir", filepath.Join(dir, "c"), "--linger", "1s"}
	if private {
		args = append(args, "--libvirt-uri", "qemu:///session")
	}
	launcher := podusr.Command(dir, args...)
	launcher.Env = os.Environ()
	if private {
		launcher.Env = append(launcher.Env, xdg...)
	}
	launcher.Stdout, launcher.Stderr = io.Discard, io.Discard
	if err := launcher.Start(); err != nil {
		return m, fmt.Errorf("start virt-launcher: %w", err)
	}
	started = append([]*exec.Cmd{launcher}, started...)
	if err := waitFile(ctx, layout.ReadyFile(privateDir), 2*time.Minute); err != nil {
		return m, fmt.Errorf("%s: launcher ready: %w", setup, err)
	}
	cc, err := grpc.NewClient("unix://"+layout.LauncherSocket(privateDir), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return m, err
	}
	defer cc.Close()
	body, err := json.Marshal(vmi)
	if err != nil {
		return m, err
	}
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := apiv1.NewLauncherClient(cc).Sync(sctx, &apiv1.SyncRequest{VmiJson: body}); err != nil {
		return m, fmt.Errorf("%s: Sync: %w", setup, err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		b, err := os.ReadFile(layout.SerialLog(privateDir))
		return err == nil && strings.Contains(string(b), startup.Marker), nil
	})
	if err != nil {
		return m, fmt.Errorf("%s: guest marker: %w", setup, err)
	}
	time.Sleep(settle)
	pids := []int{launcher.Process.Pid}
	if libvirtd != nil {
		pids = append(pids, libvirtd.Process.Pid)
		pids = append(pids, proc.Children(libvirtd.Process.Pid)...)
	}
	pids = append(pids, qemuPIDs(dir)...)
	return measure(setup, dedupe(pids))
}

// qemuPIDs are the QEMU processes whose command line names dir.
func qemuPIDs(dir string) []int {
	return proc.WithCommandLine(func(args []string) bool {
		return strings.HasPrefix(filepath.Base(args[0]), "qemu-system") && strings.Contains(strings.Join(args, "\x00"), dir)
	})
}

func dedupe(pids []int) []int {
	seen := map[int]bool{}
	var out []int
	for _, p := range pids {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

func waitFile(ctx context.Context, path string, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		_, err := os.Stat(path)
		return err == nil, nil
	})
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
