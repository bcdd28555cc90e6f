package twin

import (
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/bench/crd"
	"kubevirt.dev/virt/bench/webhook"
)

// ConfigName names both webhook configurations.
const ConfigName = "virtbench-vmi"

// Twin is an installed twin.
type Twin struct {
	kube  kubernetes.Interface
	ext   apiextensionsclient.Interface
	cmd   *exec.Cmd
	dir   string
	waitc chan error
	// Pid is the webhook process's, to measure its memory.
	Pid int
}

// Install starts the webhook on addr (host:port on the node) and creates
// the CRD and the webhook configurations. On error, what was made is removed.
func Install(ctx context.Context, kube kubernetes.Interface, ext apiextensionsclient.Interface, webhookBinary, addr string, logf func(string, ...any)) (*Twin, error) {
	t := &Twin{kube: kube, ext: ext}
	if err := t.install(ctx, webhookBinary, addr, logf); err != nil {
		t.Remove(context.WithoutCancel(ctx), logf)
		return nil, err
	}
	return t, nil
}

func (t *Twin) install(ctx context.Context, webhookBinary, addr string, logf func(string, ...any)) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("webhook address %q: %w", addr, err)
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return fmt.Errorf("webhook address %q: not an IP", addr)
	}
	// A CA made for this run signs the serving certificate for the IP the
	// kube-apiserver dials; the CA goes into the configurations' caBundle.
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(host, []net.IP{ip}, nil)
	if err != nil {
		return fmt.Errorf("webhook certificate: %w", err)
	}
	caPEM, err := lastCert(certPEM)
	if err != nil {
		return err
	}
	if t.dir, err = os.MkdirTemp("", "virt-bench-webhook-"); err != nil {
		return err
	}
	certFile, keyFile := filepath.Join(t.dir, "tls.crt"), filepath.Join(t.dir, "tls.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return err
	}
	t.cmd = exec.Command(webhookBinary, "--listen", addr, "--tls-cert-file", certFile, "--tls-private-key-file", keyFile)
	t.cmd.Stdout, t.cmd.Stderr = os.Stderr, os.Stderr
	if err := t.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", webhookBinary, err)
	}
	t.Pid = t.cmd.Process.Pid
	t.waitc = make(chan error, 1)
	go func() { t.waitc <- t.cmd.Wait() }()
	logf("twin: webhook %s serving on https://%s (pid %d)", filepath.Base(webhookBinary), addr, t.Pid)

	c, err := crd.VMI()
	if err != nil {
		return err
	}
	if _, err := t.ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, c, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create CRD %s: %w", c.Name, err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := t.ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, c.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s established: %w", c.Name, err)
	}
	logf("twin: CRD %s established", c.Name)

	base := "https://" + addr
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{
			APIGroups: []string{crd.Group}, APIVersions: []string{crd.Version},
			Resources: []string{crd.Resource}, Scope: ptr.To(admissionregistrationv1.NamespacedScope),
		},
	}}
	common := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(base + path), CABundle: caPEM}
	}
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigName},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "defaults.virtbench.kubevirt.io", ClientConfig: common(webhook.MutatePath), Rules: rules,
			SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: ptr.To[int32](10),
		}},
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "validation.virtbench.kubevirt.io", ClientConfig: common(webhook.ValidatePath), Rules: rules,
			SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: ptr.To[int32](10),
		}},
	}
	if _, err := t.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create MutatingWebhookConfiguration: %w", err)
	}
	if _, err := t.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create ValidatingWebhookConfiguration: %w", err)
	}
	return nil
}

// Remove deletes the configurations and the CRD (and with it every twin
// object), waits for the CRD to be gone, and stops the webhook. It reports
// what it could not do.
func (t *Twin) Remove(ctx context.Context, logf func(string, ...any)) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	gone := func(err error) bool { return err == nil || apierrors.IsNotFound(err) }
	// Configurations first: deleting the CRD's objects needs no webhook,
	// but a configuration left behind would outlive its server.
	if err := t.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, ConfigName, metav1.DeleteOptions{}); !gone(err) {
		logf("twin: delete MutatingWebhookConfiguration %s: %v", ConfigName, err)
	}
	if err := t.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, ConfigName, metav1.DeleteOptions{}); !gone(err) {
		logf("twin: delete ValidatingWebhookConfiguration %s: %v", ConfigName, err)
	}
	crds := t.ext.ApiextensionsV1().CustomResourceDefinitions()
	if err := crds.Delete(ctx, crd.Name, metav1.DeleteOptions{}); !gone(err) {
		logf("twin: delete CRD %s: %v", crd.Name, err)
	}
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		logf("twin: CRD %s still there: %v", crd.Name, err)
	}
	if t.cmd != nil && t.cmd.Process != nil {
		_ = t.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-t.waitc:
		case <-time.After(10 * time.Second):
			_ = t.cmd.Process.Kill()
			<-t.waitc
		}
	}
	if t.dir != "" {
		os.RemoveAll(t.dir)
	}
	logf("twin: removed")
}

// lastCert is the CA of GenerateSelfSignedCertKey's chain (serving
// certificate first, then its CA).
func lastCert(chain []byte) ([]byte, error) {
	var last *pem.Block
	for rest := chain; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		last = b
	}
	if last == nil || !strings.Contains(last.Type, "CERTIFICATE") {
		return nil, fmt.Errorf("no CA certificate in the generated chain")
	}
	return pem.EncodeToMemory(last), nil
}
