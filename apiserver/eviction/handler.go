package eviction

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Path is where virt-apiserver serves the webhook (KubeVirt's path).
const Path = "/launcher-eviction-validate"

// maxReviewBytes bounds an AdmissionReview's body: an eviction is small.
const maxReviewBytes = 1 << 20

// Pods reads a pod from the kube-apiserver.
type Pods func(ctx context.Context, namespace, name string) (*corev1.Pod, error)

// VMIs reads a VMI and marks it for evacuation.
type VMIs interface {
	Get(ctx context.Context, namespace, name string) (*virtv1.VirtualMachineInstance, error)
	// MarkEvacuation sets status.evacuationNodeName of the VMI with uid.
	MarkEvacuation(ctx context.Context, namespace, name string, uid types.UID, node string) error
}

// Handler serves the webhook.
type Handler struct {
	pods Pods
	vmis VMIs
	// callers are the users who may call it; empty, anyone.
	callers sets.Set[string]
}

// New returns the webhook's handler. callers are the user names the
// kube-apiserver authenticates as when it calls webhooks (its
// AdmissionConfiguration's kubeconfig); a request of anyone else is refused
// with 403. Without callers anyone who reaches the server may call it
// (docs/security.md says what that allows).
func New(pods Pods, vmis VMIs, callers ...string) *Handler {
	return &Handler{pods: pods, vmis: vmis, callers: sets.New(callers...)}
}

// ServeHTTP answers one AdmissionReview.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.callers.Len() > 0 {
		u, ok := request.UserFrom(r.Context())
		if !ok || !h.callers.Has(u.GetName()) {
			name := "an unauthenticated caller"
			if ok {
				name = fmt.Sprintf("user %q", u.GetName())
			}
			http.Error(w, fmt.Sprintf("%s may not call the eviction webhook: only %v (virt-apiserver's --eviction-webhook-callers)", name, sets.List(h.callers)), http.StatusForbidden)
			return
		}
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST an AdmissionReview", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReviewBytes+1))
	if err != nil || len(body) > maxReviewBytes {
		http.Error(w, "cannot read the AdmissionReview", http.StatusBadRequest)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview with a request", http.StatusBadRequest)
		return
	}
	resp := h.review(r.Context(), review.Request)
	resp.UID = review.Request.UID
	review.Response, review.Request = resp, nil
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(&review); err != nil {
		klog.FromContext(r.Context()).Error(err, "Cannot write the AdmissionReview response")
	}
}

// review decides on one request. Errors deny with 500: the webhook's
// failurePolicy is Fail, so a guest is never stopped because its VMI could
// not be read.
func (h *Handler) review(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req.Resource.Resource != "pods" || req.SubResource != "eviction" || req.Operation != admissionv1.Create {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	logger := klog.FromContext(ctx).WithValues("pod", klog.KRef(req.Namespace, req.Name))
	pod, err := h.pods(ctx, req.Namespace, req.Name)
	if apierrors.IsNotFound(err) {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	if err != nil {
		return deny(http.StatusInternalServerError, fmt.Sprintf("read pod %s/%s: %v", req.Namespace, req.Name, err))
	}
	if pod.Labels[virtv1.ComponentLabel] != virtv1.LauncherComponent {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "VirtualMachineInstance" {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	vmi, err := h.vmis.Get(ctx, pod.Namespace, ref.Name)
	switch {
	case apierrors.IsNotFound(err):
		vmi = nil
	case err != nil:
		return deny(http.StatusInternalServerError, fmt.Sprintf("read VMI %s/%s: %v", pod.Namespace, ref.Name, err))
	case vmi.UID != ref.UID:
		vmi = nil
	}
	d := Decide(pod, vmi)
	if d.Allowed {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	dryRun := req.DryRun != nil && *req.DryRun
	if d.Mark && !dryRun && vmi.Status.EvacuationNodeName != d.Node {
		if err := h.vmis.MarkEvacuation(ctx, vmi.Namespace, vmi.Name, vmi.UID, d.Node); err != nil {
			return deny(http.StatusInternalServerError, fmt.Sprintf("mark VMI %s/%s for evacuation: %v", vmi.Namespace, vmi.Name, err))
		}
		logger.Info("Eviction marked the VMI for evacuation", "vmi", klog.KObj(vmi), "node", d.Node)
	}
	// 429: the evicting client (kubectl drain) retries, as it does for a
	// PodDisruptionBudget, until the migration has taken the pod away.
	return deny(http.StatusTooManyRequests, d.Message)
}

func deny(code int32, msg string) *admissionv1.AdmissionResponse {
	reason := metav1.StatusReasonTooManyRequests
	if code != http.StatusTooManyRequests {
		reason = metav1.StatusReasonInternalError
	}
	return &admissionv1.AdmissionResponse{Result: &metav1.Status{
		Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg}}
}
