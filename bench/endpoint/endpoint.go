package endpoint

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// The platform's objects it reads.
const (
	APIService       = "v1.virtualization.kubevirt.io"
	ServiceNamespace = "virt-system"
	ServiceName      = "virt-apiserver"
	// ServerName is what virt-apiserver's certificate is for.
	ServerName = ServiceName + "." + ServiceNamespace + ".svc"
	// Name of the bench's service account, role and binding.
	Name = "virt-bench"
)

var clusterNet = &net.IPNet{IP: net.IPv4(198, 18, 0, 0), Mask: net.CIDRMask(15, 32)}

// CheckHost fails unless rawURL's host is an IP in 198.18.0.0/15 that this
// machine can reach without leaving it (the bridge holds 198.18.0.1).
func CheckHost(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("parse %q: %w", rawURL, err)
	}
	ip := net.ParseIP(u.Hostname())
	if ip == nil || !clusterNet.Contains(ip) {
		return fmt.Errorf("refusing to send load to %s: only 198.18.0.0/15 addresses of the local cluster", u.Host)
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && clusterNet.Contains(n.IP) {
			return nil
		}
	}
	return fmt.Errorf("no local address in 198.18.0.0/15: the local cluster's bridge is down (make up)")
}

// HTTPClient is an HTTP client for cfg with no client-side rate limit, so
// the load generator decides the rate.
func HTTPClient(cfg *rest.Config) (*http.Client, error) {
	if err := CheckHost(cfg.Host); err != nil {
		return nil, err
	}
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("HTTP client for %s: %w", cfg.Host, err)
	}
	return c, nil
}

// Direct sets up the service account (in namespace ns, which must exist)
// and returns a rest.Config reaching virt-apiserver's Service directly.
func Direct(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface, ns string) (*rest.Config, error) {
	svc, err := kube.CoreV1().Services(ServiceNamespace).Get(ctx, ServiceName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("virt-apiserver's Service: %w", err)
	}
	if svc.Spec.ClusterIP == "" || len(svc.Spec.Ports) == 0 {
		return nil, fmt.Errorf("virt-apiserver's Service has no ClusterIP or port")
	}
	// The aggregator's types are read as unstructured: one field does
	// not warrant its clientset.
	apisvc, err := dyn.Resource(schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}).
		Get(ctx, APIService, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("APIService %s: %w", APIService, err)
	}
	b64, _, _ := unstructured.NestedString(apisvc.Object, "spec", "caBundle")
	caBundle, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(caBundle) == 0 {
		return nil, fmt.Errorf("APIService %s has no caBundle (%v)", APIService, err)
	}
	if err := grant(ctx, kube, ns); err != nil {
		return nil, err
	}
	tok, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](int64((2 * time.Hour).Seconds()))},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("token of %s/%s: %w", ns, Name, err)
	}
	host := fmt.Sprintf("https://%s", net.JoinHostPort(svc.Spec.ClusterIP, fmt.Sprint(svc.Spec.Ports[0].Port)))
	return &rest.Config{
		Host:            host,
		BearerToken:     tok.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: caBundle, ServerName: ServerName},
		UserAgent:       "virt-bench",
		QPS:             -1,
	}, nil
}

// grant creates the service account and binds it to a role that may do
// everything with VMIs and read /metrics and profiles.
func grant(ctx context.Context, kube kubernetes.Interface, ns string) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: ns}}
	if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service account %s/%s: %w", ns, Name, err)
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: Name},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"virtualization.kubevirt.io"}, Resources: []string{"virtualmachineinstances", "virtualmachineinstances/status"}, Verbs: []string{"*"}},
			{NonResourceURLs: []string{"/metrics", "/debug/pprof/*"}, Verbs: []string{"get"}},
		},
	}
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create ClusterRole %s: %w", Name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: Name, Namespace: ns}},
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create ClusterRoleBinding %s: %w", Name, err)
		}
		// A binding left by an earlier run names its namespace: replace it.
		if err := kube.RbacV1().ClusterRoleBindings().Delete(ctx, Name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("replace ClusterRoleBinding %s: %w", Name, err)
		}
		if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create ClusterRoleBinding %s: %w", Name, err)
		}
	}
	return nil
}

// Revoke deletes the cluster-wide role and binding (the service account
// goes with its namespace).
func Revoke(ctx context.Context, kube kubernetes.Interface) error {
	var errs []error
	if err := kube.RbacV1().ClusterRoleBindings().Delete(ctx, Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, err)
	}
	if err := kube.RbacV1().ClusterRoles().Delete(ctx, Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("revoke %s: %v", Name, errs)
	}
	return nil
}
