package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/test/e2e/framework"
	"kubevirt.dev/virt/virtctl/stream"
)

// Root-owned sockets as virt-handler sees them in its container: the
// kubelet's device-plugin registration socket and the handler's own tun
// device plugin (--device-plugin-dir). Dialled as a launcher's, the first
// would hand a tenant's console the kubelet's gRPC server and give
// FindLauncher the kubelet's PID, whose network namespace is the host's.
// (/run/containerd/containerd.sock is not mounted into the handler: a link
// to it would only dangle.)
var hostSockets = []string{"/var/lib/kubelet-device-plugins/kubelet.sock", "/var/lib/kubelet-device-plugins/virt-tun.sock"}

// handlerKey is the handler's guest-access serving key and certificate in
// its container (client-go's certificate store: a symlink to the newest
// pair): a file a final state linked to it would make the handler read.
const handlerKey = "/var/lib/virt-handler/guest-access/guest-access-serving-current.pem"

// handlerMemoryBound is what the handler's container may use after the
// attacks; its limit is 256 MiB, where the kernel OOM-kills it.
const handlerMemoryBound = 160 << 20

// attack is what a tenant plants in a launcher pod's private directory
// (layout.PrivateDir, the compute container's view) before killing the
// launcher: a shell script run as the launcher's uid.
type attack struct {
	name string
	// final replaces domain.final.json.
	final string
	// sockets replaces the launcher, serial and VNC sockets; %s is the
	// socket's name.
	sockets string
}

var attacks = []attack{
	{name: "zero", final: "ln -sfn /dev/zero domain.final.json",
		sockets: "rm -f %[1]s && ln -s " + hostSockets[0] + " %[1]s"},
	{name: "shadow", final: "ln -sfn /etc/shadow domain.final.json",
		sockets: "rm -f %[1]s && mkfifo %[1]s"},
	{name: "key", final: "ln -sfn " + handlerKey + " domain.final.json",
		sockets: "rm -f %[1]s && ln -s " + hostSockets[1] + " %[1]s"},
	{name: "fifo", final: "rm -f domain.final.json && mkfifo domain.final.json",
		sockets: "rm -f %[1]s && truncate -s 1G %[1]s"},
	{name: "sparse", final: "rm -f domain.final.json && truncate -s 1G domain.final.json",
		sockets: "rm -f %[1]s && ln -s /etc/shadow %[1]s"},
}

// TestTenantCannotHurtTheHandler is issue 23's attack as a tenant makes it:
// a user bound only to the stock edit ClusterRole in their namespace
// creates VMIs, kubectl-execs into each launcher pod's compute container
// (uid 107, as edit allows) and replaces what virt-handler, root on the
// node, reads and dials there: domain.final.json becomes a symlink to
// /dev/zero, to /etc/shadow, to the handler's own private key, a FIFO, a
// 1 GiB sparse file; the launcher, serial and VNC sockets become symlinks to
// root's sockets, FIFOs, sparse files; the tenant asks for the console and
// VNC, then kills the launcher so that the handler redials and reads the
// final state. Each time: virt-handler is not restarted or OOM-killed and
// its memory stays bounded, nothing of the linked files reaches the API,
// the console or VNC streams, each VMI ends Failed with a clear reason, and
// a bystander VMI on the node keeps running.
//
// A containerDisk container of the pod shares the uid and the PID
// namespace, so it could do the same; its image holds nothing but the disk
// and virt-imagecopy (no shell to exec), so the test acts from the compute
// container, which stands for it.
func TestTenantCannotHurtTheHandler(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	tenant := userBoundTo(t, ns, "e2e-tenant", "edit")
	kubeconfig := writeKubeconfig(t, tenant, ns)

	handler := handlerPod(t)
	restarts := framework.RestartCount(handler, "virt-handler")
	hpid, err := framework.ContainerProcess(handler, "virt-handler")
	if err != nil {
		t.Fatal(err)
	}
	cgroup := containerCgroup(t, hpid)
	ooms := cgroup.oomKills(t)
	secrets := secretsOf(t, hpid)

	// The tenant's VMIs: a bystander and one victim per attack, created by
	// the tenant with kubectl.
	names := []string{"bystander"}
	for _, a := range attacks {
		names = append(names, "victim-"+a.name)
	}
	for _, name := range names {
		createTinyAs(t, kubeconfig, ns, name)
	}
	running := map[string]*virtv1.VirtualMachineInstance{}
	pods := map[string]*corev1.Pod{}
	for _, name := range names {
		vmi, err := cluster.WaitVMIRunning(ctx, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		running[name] = vmi
		if pods[name], err = cluster.LauncherPod(ctx, vmi); err != nil {
			t.Fatal(err)
		}
	}

	// What reached a user: the streams' answers.
	var seenMu sync.Mutex
	var seen strings.Builder
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			name := "victim-" + a.name
			pod := pods[name]
			script := "cd " + layout.PrivateDir + " && " + a.final
			for _, s := range []string{layout.SerialSocketName, layout.VNCSocketName, filepath.Join(layout.SocketDirName, layout.LauncherSocketName)} {
				script += " && " + fmt.Sprintf(a.sockets, s)
			}
			if out, err := kubectlAs(ctx, kubeconfig, "exec", "-n", ns, pod.Name, "-c", layout.ComputeContainer, "--", "sh", "-c", script+" && ls -l . sockets"); err != nil {
				t.Fatalf("plant as the tenant: %v", err)
			} else {
				t.Logf("planted:\n%s", out)
			}
			for _, sub := range []string{"console", "vnc"} {
				sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				conn, err := stream.Dial(sctx, tenant, ns, name, sub)
				if err == nil {
					// Whatever the handler connected to, the tenant now
					// reads it: keep it as seen, then fail.
					buf := make([]byte, 4096)
					var n int
					read := make(chan struct{})
					go func() {
						defer close(read)
						n, _ = conn.Read(buf)
					}()
					select {
					case <-read:
					case <-time.After(3 * time.Second):
					}
					conn.Close()
					<-read
					seenMu.Lock()
					seen.Write(buf[:n])
					seenMu.Unlock()
					t.Errorf("%s of %s connected through a replaced socket (read %q)", sub, name, buf[:n])
				} else {
					seenMu.Lock()
					seen.WriteString(err.Error() + "\n")
					seenMu.Unlock()
					t.Logf("%s refused: %v", sub, err)
				}
				cancel()
			}
			// The tenant kills the launcher: the handler loses its
			// connection, redials the socket and reads the final state.
			kill := `for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = virt-launcher ] && kill -9 ${p#/proc/}; done; true`
			if _, err := kubectlAs(ctx, kubeconfig, "exec", "-n", ns, pod.Name, "-c", layout.ComputeContainer, "--", "sh", "-c", kill); err != nil {
				// The exec may lose its container as the launcher dies.
				t.Logf("kill the launcher: %v", err)
			}
			vmi, err := cluster.WaitVMI(ctx, ns, name, 3*time.Minute, "Failed", func(v *virtv1.VirtualMachineInstance) (bool, error) {
				return v.Status.Phase.IsFinal(), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if vmi.Status.Phase != virtv1.Failed || vmi.Status.Reason == "" {
				t.Errorf("VMI %s ended %s, reason %q: want Failed with a reason", name, vmi.Status.Phase, vmi.Status.Reason)
			}
			t.Logf("VMI %s ended %s: %s", name, vmi.Status.Phase, vmi.Status.Reason)
		})
	}

	t.Run("virt-handler was neither restarted nor OOM-killed", func(t *testing.T) {
		now, err := cluster.Kube.CoreV1().Pods(handler.Namespace).Get(ctx, handler.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the handler pod %s: %v", handler.Name, err)
		}
		if got := framework.RestartCount(now, "virt-handler"); got != restarts {
			t.Errorf("virt-handler restarted: %d restarts, %d before the attacks", got, restarts)
		}
		if got := cgroup.oomKills(t); got != ooms {
			t.Errorf("the kernel OOM-killed in virt-handler's container: oom_kill %d, %d before", got, ooms)
		}
		cur := cgroup.current(t)
		if cur > handlerMemoryBound {
			t.Errorf("virt-handler uses %d MiB after the attacks, more than %d MiB", cur>>20, handlerMemoryBound>>20)
		}
		t.Logf("virt-handler's container: %d MiB now, %d MiB at its peak since it started (-1: unknown; limit 256 MiB)", cur>>20, cgroup.peak(t)>>20)
	})

	t.Run("the bystander keeps running", func(t *testing.T) {
		vmi, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, "bystander", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if vmi.Status.Phase != virtv1.Running || framework.Condition(vmi, virtv1.VirtualMachineInstanceReady) != corev1.ConditionTrue {
			t.Errorf("bystander is %s (reason %q)", vmi.Status.Phase, vmi.Status.Reason)
		}
		pod, err := cluster.LauncherPod(ctx, vmi)
		if err != nil || pod.UID != pods["bystander"].UID || pod.Status.Phase != corev1.PodRunning {
			t.Errorf("bystander's launcher pod changed or stopped: %v", err)
		}
	})

	t.Run("nothing of the linked files reached the API or a stream", func(t *testing.T) {
		vmis, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		events, err := cluster.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		vj, _ := json.Marshal(vmis)
		ej, _ := json.Marshal(events)
		reached := string(vj) + string(ej) + seen.String()
		for what, s := range secrets {
			if strings.Contains(reached, s) {
				t.Errorf("%s reached a user (%.12s…)", what, s)
			}
		}
		if strings.Contains(reached, `\u0000`) || strings.ContainsRune(reached, 0) {
			t.Error("NUL bytes (of /dev/zero?) reached a user")
		}
	})
}

// memoryCgroup is the memory cgroup of a process: v1's memory controller
// where the node mounts it (this one does), else the v2 unified hierarchy.
type memoryCgroup struct {
	dir string
	v1  bool
}

func containerCgroup(t *testing.T, pid int) memoryCgroup {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var unified string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if slices.Contains(strings.Split(f[1], ","), "memory") {
			return memoryCgroup{dir: filepath.Join("/sys/fs/cgroup/memory", f[2]), v1: true}
		}
		if f[0] == "0" {
			unified = f[2]
		}
	}
	if unified == "" {
		t.Fatalf("no memory cgroup for pid %d in %q", pid, data)
	}
	return memoryCgroup{dir: filepath.Join("/sys/fs/cgroup", unified)}
}

// current is the cgroup's memory use now.
func (c memoryCgroup) current(t *testing.T) int64 {
	t.Helper()
	if c.v1 {
		return c.value(t, "memory.usage_in_bytes")
	}
	return c.value(t, "memory.current")
}

// peak is the cgroup's highest memory use, -1 if the kernel does not say.
func (c memoryCgroup) peak(t *testing.T) int64 {
	t.Helper()
	file := "memory.peak"
	if c.v1 {
		file = "memory.max_usage_in_bytes"
	}
	if _, err := os.Stat(filepath.Join(c.dir, file)); err != nil {
		return -1
	}
	return c.value(t, file)
}

// oomKills is the cgroup's count of processes the OOM killer killed.
func (c memoryCgroup) oomKills(t *testing.T) int64 {
	t.Helper()
	file := "memory.events"
	if c.v1 {
		file = "memory.oom_control"
	}
	data, err := os.ReadFile(filepath.Join(c.dir, file))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatalf("no oom_kill count in %s/%s", c.dir, file)
	return 0
}

func (c memoryCgroup) value(t *testing.T, file string) int64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(c.dir, file))
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		t.Fatalf("%s/%s: %v", c.dir, file, err)
	}
	return v
}

// secretsOf collects pieces of the files the attacks link to, as the
// handler's container holds them (and the host's /etc/shadow): no piece
// may reach a user.
func secretsOf(t *testing.T, handlerPID int) map[string]string {
	t.Helper()
	secrets := map[string]string{}
	root := "/proc/" + strconv.Itoa(handlerPID) + "/root"
	for _, f := range []string{root + "/etc/shadow", "/etc/shadow"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for i, line := range strings.Split(string(data), "\n") {
			// The password hash field; locked accounts ("*", "!") say
			// nothing.
			if fields := strings.Split(line, ":"); len(fields) > 1 && len(fields[1]) >= 8 {
				secrets[fmt.Sprintf("%s line %d", f, i+1)] = fields[1]
			}
		}
	}
	// The store's link is absolute in the container: resolve it there,
	// not on the host.
	keyFile, err := os.Readlink(root + handlerKey)
	if err == nil && filepath.IsAbs(keyFile) {
		keyFile = root + keyFile
	} else if err == nil {
		keyFile = filepath.Join(filepath.Dir(root+handlerKey), keyFile)
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatalf("the handler's key as the attack links to it: %v", err)
	}
	for i, line := range bytes.Split(key, []byte("\n")) {
		if len(line) >= 16 && !bytes.HasPrefix(line, []byte("-----")) {
			secrets[fmt.Sprintf("the handler's key line %d", i+1)] = string(line[:16])
		}
	}
	if len(secrets) == 0 {
		t.Fatal("no secret to look for")
	}
	return secrets
}

// writeKubeconfig writes a kubeconfig of a user's client configuration, for
// kubectl.
func writeKubeconfig(t *testing.T, cfg *rest.Config, ns string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["e2e"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["tenant"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "tenant", Namespace: ns}
	kc.CurrentContext = "e2e"
	path := filepath.Join(t.TempDir(), "tenant.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubectlAs runs the cluster's kubectl with a user's kubeconfig.
func kubectlAs(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, cluster.KubectlPath, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// createTinyAs creates vmi-tiny under another name as the tenant.
func createTinyAs(t *testing.T, kubeconfig, ns, name string) {
	t.Helper()
	vmi, err := cluster.Example("vmi-tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vmi.Name, vmi.Namespace = name, ns
	vmi.Labels = map[string]string{"app": name}
	vmi.APIVersion, vmi.Kind = virtv1.SchemeGroupVersion.String(), "VirtualMachineInstance"
	data, err := yaml.Marshal(vmi)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := kubectlAs(t.Context(), kubeconfig, "create", "-n", ns, "-f", path); err != nil {
		t.Fatal(err)
	}
}
