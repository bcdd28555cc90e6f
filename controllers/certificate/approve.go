package certificate

import (
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
)

// The user extras of a pod's bound service-account token, which the
// kube-apiserver copies into a request's spec.extra (k8s.io/apiserver's
// serviceaccount package): the node and the pod the token is bound to.
const (
	NodeNameExtra = "authentication.kubernetes.io/node-name"
	PodNameExtra  = "authentication.kubernetes.io/pod-name"
	PodUIDExtra   = "authentication.kubernetes.io/pod-uid"
)

// Requester is the one identity whose requests are approved: the handlers'
// service account, from the deployment (virt-controller's flags), never a
// literal.
type Requester struct {
	Namespace      string
	ServiceAccount string
}

// UserName is the requester's user name as the kube-apiserver records it
// in spec.username.
func (r Requester) UserName() string {
	return "system:serviceaccount:" + r.Namespace + ":" + r.ServiceAccount
}

// PodGetter reads a pod of the requester's namespace.
type PodGetter func(ctx context.Context, namespace, name string) (*corev1.Pod, error)

// refusal is a reason to deny a request, as opposed to an error that may go
// away on a retry.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

func refuse(format string, args ...any) error { return &refusal{fmt.Sprintf(format, args...)} }

// isRefusal reports whether err denies the request.
func isRefusal(err error) bool {
	var r *refusal
	return errors.As(err, &r)
}

// review returns nil when csr may be approved, a refusal saying why not,
// or another error when the requesting pod could not be read.
func review(ctx context.Context, p Profile, csr *certificatesv1.CertificateSigningRequest, who Requester, getPod PodGetter) error {
	if csr.Spec.SignerName != p.SignerName {
		return refuse("signer %q is not %q", csr.Spec.SignerName, p.SignerName)
	}
	if csr.Spec.Username != who.UserName() {
		return refuse("requested by %q: only %q may request %ss", csr.Spec.Username, who.UserName(), p.What)
	}
	node, err := one(csr.Spec.Extra, NodeNameExtra)
	if err != nil {
		return err
	}
	req, err := parse(csr)
	if err != nil {
		return err
	}
	named, err := checkShape(p, req, csr.Spec.Usages)
	if err != nil {
		return err
	}
	if named != node {
		return refuse("the handler of node %q asked for a certificate of node %q", node, named)
	}
	return checkPod(ctx, csr, who, node, req.IPAddresses, getPod)
}

// checkPod refuses IP addresses that are not the requesting pod's, and a
// pod that is not the node's handler.
func checkPod(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, who Requester, node string, ips []net.IP, getPod PodGetter) error {
	name, err := one(csr.Spec.Extra, PodNameExtra)
	if err != nil {
		return err
	}
	uid, err := one(csr.Spec.Extra, PodUIDExtra)
	if err != nil {
		return err
	}
	pod, err := getPod(ctx, who.Namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		return refuse("the requesting pod %s/%s is gone", who.Namespace, name)
	case err != nil:
		return fmt.Errorf("get the requesting pod %s/%s: %w", who.Namespace, name, err)
	case string(pod.UID) != uid:
		return refuse("the requesting pod %s/%s (uid %s) was replaced", who.Namespace, name, uid)
	case pod.Spec.NodeName != node:
		return refuse("the requesting pod %s/%s runs on node %q, not %q", who.Namespace, name, pod.Spec.NodeName, node)
	}
	podIPs := sets.New[string]()
	for _, ip := range pod.Status.PodIPs {
		if parsed := net.ParseIP(ip.IP); parsed != nil {
			podIPs.Insert(parsed.String())
		}
	}
	for _, ip := range ips {
		if !podIPs.Has(ip.String()) {
			return refuse("IP address %s is not one of the requesting pod's %v", ip, sets.List(podIPs))
		}
	}
	return nil
}

// one returns the single value of a user extra.
func one(extra map[string]certificatesv1.ExtraValue, key string) (string, error) {
	v := extra[key]
	if len(v) != 1 || v[0] == "" {
		return "", refuse("the requester's credentials have no single %s: not the bound token of a handler pod", key)
	}
	return v[0], nil
}

// parse decodes the request and checks its signature: the requester holds
// the key.
func parse(csr *certificatesv1.CertificateSigningRequest) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, refuse("spec.request is not a PEM CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, refuse("spec.request: %v", err)
	}
	if err := req.CheckSignature(); err != nil {
		return nil, refuse("spec.request: %v", err)
	}
	return req, nil
}

// oidCommonName is the subject attribute of the common name.
var oidCommonName = asn1.ObjectIdentifier{2, 5, 4, 3}

// checkShape returns the node a request is for, or refuses it unless it is
// a handler's request of the profile: a subject of the profile's common
// name (system:virt-handler:NODE for guest access) alone, NODE as the one
// DNS name, no e-mail or URI names, the profile's key usages only, and a
// key of at least 256 bits (ECDSA) or 2048 bits (RSA). Its IP addresses,
// when the profile allows them, are the approver's to check.
func checkShape(p Profile, req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) (string, error) {
	node, ok := p.NodeOf(req.Subject.CommonName)
	if !ok {
		return "", refuse("common name %q is not %s", req.Subject.CommonName, p.CommonName("NODE"))
	}
	for i, n := range req.Subject.Names {
		if i > 0 || !n.Type.Equal(oidCommonName) {
			return "", refuse("the subject has more than one common name (%v)", n.Type)
		}
	}
	if !slices.Equal(req.DNSNames, []string{node}) {
		return "", refuse("DNS names %q: the only one must be the node name %q", req.DNSNames, node)
	}
	if len(req.EmailAddresses) != 0 || len(req.URIs) != 0 {
		return "", refuse("e-mail addresses or URIs requested")
	}
	if !p.IPs && len(req.IPAddresses) != 0 {
		return "", refuse("IP addresses requested: a %s names its node only", p.What)
	}
	for _, u := range usages {
		if !p.Allowed.Has(u) {
			return "", refuse("usage %q requested: only %q", u, sets.List(p.Allowed))
		}
	}
	for _, u := range p.Required {
		if !slices.Contains(usages, u) {
			return "", refuse("usage %q not requested", u)
		}
	}
	switch k := req.PublicKey.(type) {
	case *ecdsa.PublicKey:
		if k.Curve.Params().BitSize < 256 {
			return "", refuse("ECDSA key of %d bits", k.Curve.Params().BitSize)
		}
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return "", refuse("RSA key of %d bits", k.N.BitLen())
		}
	default:
		return "", refuse("key type %T", req.PublicKey)
	}
	return node, nil
}
