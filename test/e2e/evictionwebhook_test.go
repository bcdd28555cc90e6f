package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestEvictionWebhookCallers: virt-apiserver's pods/eviction webhook
// answers only the kube-apiserver's webhook identity (make up gives the
// kube-apiserver that client certificate in its AdmissionConfiguration and
// virt-apiserver --eviction-webhook-callers): a caller without a
// certificate and the cluster's admin get 403, the kube-apiserver's
// identity an AdmissionReview. Drains through the kube-apiserver (the
// eviction tests here and in test/nodes) prove the kube-apiserver's calls
// get through.
func TestEvictionWebhookCallers(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	svc, err := cluster.Kube.CoreV1().Services("virt-system").Get(ctx, "virt-apiserver", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pki := filepath.Join(cluster.State, "pki")
	caPEM, err := os.ReadFile(filepath.Join(pki, "virt-apiserver-ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("no certificate in virt-apiserver-ca.crt")
	}
	review, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "e2e-1", Namespace: "default", Name: "virt-launcher-no-such-pod",
			Operation: admissionv1.Create, Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, SubResource: "eviction"},
	})
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("https://%s/launcher-eviction-validate", net.JoinHostPort(svc.Spec.ClusterIP, fmt.Sprint(svc.Spec.Ports[0].Port)))
	call := func(cert string) (int, string) {
		t.Helper()
		conf := &tls.Config{RootCAs: roots, ServerName: "virt-apiserver.virt-system.svc", MinVersion: tls.VersionTLS12}
		if cert != "" {
			pair, err := tls.LoadX509KeyPair(filepath.Join(pki, cert+".crt"), filepath.Join(pki, cert+".key"))
			if err != nil {
				t.Fatal(err)
			}
			conf.Certificates = []tls.Certificate{pair}
		}
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: conf}}
		defer client.CloseIdleConnections()
		resp, err := client.Post(url, "application/json", bytes.NewReader(review))
		if err != nil {
			t.Fatalf("POST %s as %q: %v", url, cert, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return resp.StatusCode, strings.TrimSpace(string(body))
	}
	for _, cert := range []string{"", "admin"} {
		if code, body := call(cert); code != http.StatusForbidden {
			t.Errorf("the webhook called with certificate %q: HTTP %d %s, want 403", cert, code, body)
		}
	}
	code, body := call("kube-apiserver-webhook-client")
	var got admissionv1.AdmissionReview
	if code != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil || got.Response == nil || !got.Response.Allowed {
		t.Errorf("the webhook called as the kube-apiserver: HTTP %d %s, want an AdmissionReview allowing the eviction of a pod that does not exist", code, body)
	}
}
