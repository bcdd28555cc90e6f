package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/test/e2e/framework"
	"kubevirt.dev/virt/virtctl/stream"
	"kubevirt.dev/virt/virtctl/vnc"
)

// consoleTimeout bounds an answer typed into the guest's shell: TCG and a
// loaded machine make the guest slow, never this slow.
const consoleTimeout = 30 * time.Second

// TestGuestAccess reaches vmi-tiny's guest the way a user does: through the
// kube-apiserver's aggregator, as an ordinary user with a client
// certificate, authorized by RBAC on the subresources.
func TestGuestAccess(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	example := filepath.Join(cluster.Root, "artifacts", "examples", "vmi-tiny.yaml")
	if _, err := cluster.Kubectl(ctx, "create", "-n", ns, "-f", example); err != nil {
		t.Fatal(err)
	}
	vmi, err := cluster.WaitVMIRunning(ctx, ns, "vmi-tiny")
	if err != nil {
		t.Fatal(err)
	}
	pod, err := cluster.LauncherPod(ctx, vmi)
	if err != nil {
		t.Fatal(err)
	}
	serial := cluster.FollowSerial(t, pod)
	if err := serial.WaitFor(ctx, "VIRT-GUEST-READY", 2*time.Minute); err != nil {
		t.Fatal(err)
	}

	editor := userBoundTo(t, ns, "e2e-editor", "virt:edit", "virt:view")
	viewer := userBoundTo(t, ns, "e2e-viewer", "virt:view")

	t.Run("console runs a command in the guest's shell", func(t *testing.T) {
		conn, err := stream.Dial(ctx, editor, ns, vmi.Name, "console")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		out := readInto(conn)
		if _, err := io.WriteString(conn, "echo $((6*7))\r"); err != nil {
			t.Fatal(err)
		}
		if err := out.waitFor(ctx, "\n42\r"); err != nil {
			t.Fatal(err)
		}
		// The node's serial log keeps being written while a console is
		// attached.
		if err := serial.WaitFor(ctx, "\n42\r", consoleTimeout); err != nil {
			t.Error(err)
		}
	})

	t.Run("a second console takes over", func(t *testing.T) {
		first, err := stream.Dial(ctx, editor, ns, vmi.Name, "console")
		if err != nil {
			t.Fatal(err)
		}
		defer first.Close()
		firstOut := readInto(first)
		second, err := stream.Dial(ctx, editor, ns, vmi.Name, "console")
		if err != nil {
			t.Fatal(err)
		}
		defer second.Close()
		if err := firstOut.waitClosed(ctx); err != nil {
			t.Fatal(err)
		}
		if err := firstOut.err(); err == nil || !strings.Contains(err.Error(), "another console connection took over") {
			t.Errorf("the first console ended with %v, want the takeover reason", err)
		}
		secondOut := readInto(second)
		if _, err := io.WriteString(second, "echo $((6*9))\r"); err != nil {
			t.Fatal(err)
		}
		if err := secondOut.waitFor(ctx, "\n54\r"); err != nil {
			t.Error(err)
		}
	})

	t.Run("vnc screenshot shows the guest's screen", func(t *testing.T) {
		// The three ways in: virtctl's command, KubeVirt's URL as any
		// client GETs it (kubectl get --raw), and the editor's client.
		file := filepath.Join(t.TempDir(), "screen.png")
		virtctl := exec.CommandContext(ctx, filepath.Join(filepath.Dir(cluster.KubectlPath), "virtctl"),
			"vnc", "screenshot", "-n", ns, vmi.Name, "--file", file)
		virtctl.Env = append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig)
		if out, err := virtctl.CombinedOutput(); err != nil {
			t.Fatalf("virtctl vnc screenshot: %v\n%s", err, out)
		}
		fromVirtctl, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := cluster.Kubectl(ctx, "get", "--raw",
			"/apis/virtualization.kubevirt.io/v1/namespaces/"+ns+"/virtualmachineinstances/"+vmi.Name+"/vnc/screenshot?moveCursor=false")
		if err != nil {
			t.Fatal(err)
		}
		fromEditor, err := vnc.Screenshot(ctx, virtClient(t, editor), ns, vmi.Name, false)
		if err != nil {
			t.Fatal(err)
		}
		var size image.Point
		for name, data := range map[string][]byte{"virtctl": fromVirtctl, "GET": []byte(raw), "the editor's client": fromEditor} {
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: not a PNG (%d bytes): %v", name, len(data), err)
			}
			b := img.Bounds()
			// The test guest's VGA text console, 80x25 of 9x16 cells;
			// a guest that switched modes is still within the cap.
			if b.Dx() < 320 || b.Dy() < 200 || b.Dx()*b.Dy() > 3840*2160 {
				t.Errorf("%s: a screenshot of %dx%d", name, b.Dx(), b.Dy())
			}
			if size != (image.Point{}) && b.Size() != size {
				t.Errorf("%s: %v, another screenshot %v", name, b.Size(), size)
			}
			size = b.Size()
			if oneColour(img) {
				t.Errorf("%s: the %dx%d screenshot is all one colour: the guest's text console is not drawn", name, b.Dx(), b.Dy())
			}
		}
		t.Logf("screenshots of %v", size)
	})

	t.Run("RBAC on the subresources", func(t *testing.T) {
		for _, sub := range []string{"console", "vnc"} {
			_, err := stream.Dial(ctx, viewer, ns, vmi.Name, sub)
			if !apierrors.IsForbidden(err) {
				t.Errorf("virt:view opened %s: err = %v, want 403", sub, err)
			}
		}
		viewerClient := virtClient(t, viewer)
		if _, err := vnc.Screenshot(ctx, viewerClient, ns, vmi.Name, false); !apierrors.IsForbidden(err) {
			t.Errorf("virt:view took a screenshot: err = %v, want 403", err)
		}
		for _, action := range []struct{ resource, sub string }{
			{"virtualmachines", "start"}, {"virtualmachines", "stop"}, {"virtualmachines", "restart"},
			{"virtualmachineinstances", "pause"}, {"virtualmachineinstances", "unpause"},
		} {
			err := put(ctx, viewerClient, ns, action.resource, "anything", action.sub, &virtv1.StartOptions{})
			if !apierrors.IsForbidden(err) {
				t.Errorf("virt:view PUT %s/%s: err = %v, want 403", action.resource, action.sub, err)
			}
		}

		// A client with a credential the cluster does not know is not
		// authenticated at all.
		bad := cluster.AnonymousConfig()
		bad.BearerToken = "not-a-token"
		if _, err := stream.Dial(ctx, bad, ns, vmi.Name, "console"); !apierrors.IsUnauthorized(err) {
			t.Errorf("unknown token opened the console: err = %v, want 401", err)
		}
		if _, err := stream.Dial(ctx, cluster.AnonymousConfig(), ns, vmi.Name, "console"); !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) {
			t.Errorf("anonymous client opened the console: err = %v, want 401 or 403", err)
		}
	})

	t.Run("virt-handler refuses callers other than virt-apiserver", func(t *testing.T) {
		handlerRefusesServiceAccount(t, ns, vmi)
	})
}

// oneColour reports whether every pixel of img is the same.
func oneColour(img image.Image) bool {
	b := img.Bounds()
	first := img.At(b.Min.X, b.Min.Y)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if img.At(x, y) != first {
				return false
			}
		}
	}
	return true
}

// handlerRefusesServiceAccount dials the guest-access endpoint of the VMI's
// virt-handler directly, as anything in the cluster could, with a service
// account's token and no certificate of the virt-handler CA: the handler
// must not open the console.
func handlerRefusesServiceAccount(t *testing.T, ns string, vmi *virtv1.VirtualMachineInstance) {
	ctx := t.Context()
	handlers, err := cluster.Kube.CoreV1().Pods("virt-system").List(ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/name=virt-handler",
		FieldSelector: "spec.nodeName=" + vmi.Status.NodeName,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(handlers.Items) != 1 || handlers.Items[0].Status.PodIP == "" {
		t.Fatalf("want one virt-handler with an IP on node %s, found %d", vmi.Status.NodeName, len(handlers.Items))
	}
	sa, err := cluster.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "intruder"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token, err := cluster.Kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("https://%s/v1/namespaces/%s/virtualmachineinstances/%s/console?uid=%s",
		net.JoinHostPort(handlers.Items[0].Status.PodIP, "8187"), ns, vmi.Name, vmi.UID)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token.Status.Token)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	req.Header.Set("Sec-WebSocket-Protocol", stream.Subprotocol)
	// The intruder does not even check whom it talks to.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("virt-handler answered a service account's token with %s, want the TLS handshake refused", resp.Status)
	}
	var opErr *net.OpError
	if !strings.Contains(err.Error(), "certificate") && !errors.As(err, &opErr) {
		t.Errorf("the handler refused, but not in the TLS handshake: %v", err)
	}
}

// userBoundTo is an ordinary user bound in ns to the given ClusterRoles.
func userBoundTo(t *testing.T, ns, user string, roles ...string) *rest.Config {
	t.Helper()
	for _, role := range roles {
		_, err := cluster.Kube.RbacV1().RoleBindings(ns).Create(t.Context(), &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user + "-" + strings.ReplaceAll(role, ":", "-")},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func virtClient(t *testing.T, cfg *rest.Config) virtclient.Interface {
	t.Helper()
	c, err := virtclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// put calls a lifecycle subresource by its URL, as any client may (virtctl
// calls the generated methods, which send the same PUT).
func put(ctx context.Context, c virtclient.Interface, ns, resource, name, sub string, body runtime.Object) error {
	return c.VirtualizationV1().RESTClient().Put().
		Namespace(ns).Resource(resource).Name(name).SubResource(sub).
		Body(body).Do(ctx).Error()
}

// output collects what a stream sends until it ends.
type output struct {
	mu     sync.Mutex
	data   strings.Builder
	done   chan struct{}
	endErr error
}

func readInto(r io.Reader) *output {
	o := &output{done: make(chan struct{})}
	go func() {
		defer close(o.done)
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			o.mu.Lock()
			o.data.Write(buf[:n])
			if err != nil {
				o.endErr = err
			}
			o.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return o
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.data.String()
}

// tail is the end of what the stream sent, for error messages: a guest's
// boot log before it would drown them.
func (o *output) tail() string {
	s := o.String()
	if len(s) > 600 {
		return "…" + s[len(s)-600:]
	}
	return s
}

func (o *output) err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.endErr
}

func (o *output) waitFor(ctx context.Context, text string) error {
	err := framework.WaitFor(ctx, consoleTimeout, fmt.Sprintf("%q from the console", text), func(context.Context) (bool, error) {
		return strings.Contains(o.String(), text), nil
	})
	if err != nil {
		return fmt.Errorf("%w; the console sent, last: %q (stream ended: %v)", err, o.tail(), o.err())
	}
	return nil
}

func (o *output) waitClosed(ctx context.Context) error {
	select {
	case <-o.done:
		return nil
	case <-time.After(consoleTimeout):
		return fmt.Errorf("the stream did not end within %s", consoleTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// appearsWithin watches the stream for d and reports whether text arrived:
// for output that must not come, a bounded window is all a test can watch.
func (o *output) appearsWithin(ctx context.Context, text string, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if strings.Contains(o.String(), text) {
			return true
		}
		select {
		case <-ctx.Done():
			return strings.Contains(o.String(), text)
		case <-tick.C:
		}
	}
}
