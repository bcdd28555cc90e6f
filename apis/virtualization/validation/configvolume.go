package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
)

// validateConfigVolume checks the volumes the kubelet projects into the
// launcher pod and the launcher turns into read-only ISOs.
func validateConfigVolume(src *virtualization.VolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if cm := src.ConfigMap; cm != nil {
		p := fldPath.Child("configMap")
		if cm.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), "the ConfigMap of the VMI's namespace the disk holds"))
		}
		allErrs = append(allErrs, validateDNSSubdomain(cm.Name, p.Child("name"))...)
		allErrs = append(allErrs, validateISOLabel(cm.VolumeLabel, p.Child("volumeLabel"))...)
	}
	if s := src.Secret; s != nil {
		p := fldPath.Child("secret")
		if s.SecretName == "" {
			allErrs = append(allErrs, field.Required(p.Child("secretName"), "the Secret of the VMI's namespace the disk holds"))
		}
		allErrs = append(allErrs, validateDNSSubdomain(s.SecretName, p.Child("secretName"))...)
		allErrs = append(allErrs, validateISOLabel(s.VolumeLabel, p.Child("volumeLabel"))...)
	}
	if d := src.DownwardAPI; d != nil {
		allErrs = append(allErrs, validateISOLabel(d.VolumeLabel, fldPath.Child("downwardAPI", "volumeLabel"))...)
	}
	if sa := src.ServiceAccount; sa != nil {
		p := fldPath.Child("serviceAccount", "serviceAccountName")
		if sa.ServiceAccountName == "" {
			allErrs = append(allErrs, field.Required(p, "the service account whose token the disk holds"))
		}
		allErrs = append(allErrs, validateDNSSubdomain(sa.ServiceAccountName, p)...)
	}
	if sp := src.Sysprep; sp != nil {
		p := fldPath.Child("sysprep")
		switch {
		case sp.ConfigMap != nil && sp.Secret != nil:
			allErrs = append(allErrs, field.Forbidden(p, "give the answer file once: configMap or secret"))
		case sp.ConfigMap == nil && sp.Secret == nil:
			allErrs = append(allErrs, field.Required(p, "a configMap or a secret holding autounattend.xml or unattend.xml"))
		case sp.ConfigMap != nil:
			allErrs = append(allErrs, validateDNSSubdomain(sp.ConfigMap.Name, p.Child("configMap", "name"))...)
		default:
			allErrs = append(allErrs, validateDNSSubdomain(sp.Secret.Name, p.Child("secret", "name"))...)
		}
	}
	return allErrs
}

// maxISOLabel is ISO 9660's volume identifier length.
const maxISOLabel = 32

func validateISOLabel(l string, fldPath *field.Path) field.ErrorList {
	if len(l) > maxISOLabel {
		return field.ErrorList{field.TooLong(fldPath, l, maxISOLabel)}
	}
	return nil
}

// validateServiceAccountVolumes allows one serviceAccount volume, as
// KubeVirt does: its token is the launcher pod's, and a pod has one account.
func validateServiceAccountVolumes(spec *virtualization.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	seen := false
	for i, v := range spec.Volumes {
		if v.ServiceAccount == nil {
			continue
		}
		if seen {
			return field.ErrorList{field.Forbidden(fldPath.Index(i).Child("serviceAccount"), "only one serviceAccount volume is allowed: its token is the launcher pod's account's")}
		}
		seen = true
	}
	return nil
}

// validateAccessCredentials checks spec.accessCredentials as KubeVirt's
// admitter does: one credential per item, a secret source, one propagation
// method, users for the guest agent, and the cloud-init volume a noCloud or
// configDrive propagation writes into.
func validateAccessCredentials(spec *virtualization.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	noCloud, configDrive := false, false
	for _, v := range spec.Volumes {
		noCloud = noCloud || v.CloudInitNoCloud != nil
		configDrive = configDrive || v.CloudInitConfigDrive != nil
	}
	secret := func(s *virtualization.AccessCredentialSecretSource, p *field.Path) {
		if s == nil || s.SecretName == "" {
			allErrs = append(allErrs, field.Required(p.Child("secret", "secretName"), "the Secret of the VMI's namespace holding the credential"))
			return
		}
		allErrs = append(allErrs, validateDNSSubdomain(s.SecretName, p.Child("secret", "secretName"))...)
	}
	for i, c := range spec.AccessCredentials {
		p := fldPath.Index(i)
		switch {
		case c.SSHPublicKey != nil && c.UserPassword != nil:
			allErrs = append(allErrs, field.Forbidden(p, "an access credential is sshPublicKey or userPassword, not both"))
		case c.SSHPublicKey != nil:
			k := c.SSHPublicKey
			kp := p.Child("sshPublicKey")
			secret(k.Source.Secret, kp.Child("source"))
			m := k.PropagationMethod
			mp := kp.Child("propagationMethod")
			n := 0
			for _, given := range []bool{m.NoCloud != nil, m.ConfigDrive != nil, m.QemuGuestAgent != nil} {
				if given {
					n++
				}
			}
			switch {
			case n == 0:
				allErrs = append(allErrs, field.Required(mp, "noCloud, configDrive or qemuGuestAgent"))
			case n > 1:
				allErrs = append(allErrs, field.Forbidden(mp, "only one of noCloud, configDrive and qemuGuestAgent"))
			case m.NoCloud != nil && !noCloud:
				allErrs = append(allErrs, field.Invalid(mp.Child("noCloud"), "{}", "needs a cloudInitNoCloud volume to carry the keys"))
			case m.ConfigDrive != nil && !configDrive:
				allErrs = append(allErrs, field.Invalid(mp.Child("configDrive"), "{}", "needs a cloudInitConfigDrive volume to carry the keys"))
			case m.QemuGuestAgent != nil:
				if len(m.QemuGuestAgent.Users) == 0 {
					allErrs = append(allErrs, field.Required(mp.Child("qemuGuestAgent", "users"), "the guest users whose authorized_keys get the keys"))
				}
				for j, u := range m.QemuGuestAgent.Users {
					if u == "" {
						allErrs = append(allErrs, field.Required(mp.Child("qemuGuestAgent", "users").Index(j), "a user name"))
					}
				}
			}
		case c.UserPassword != nil:
			pp := p.Child("userPassword")
			secret(c.UserPassword.Source.Secret, pp.Child("source"))
			if c.UserPassword.PropagationMethod.QemuGuestAgent == nil {
				allErrs = append(allErrs, field.Required(pp.Child("propagationMethod", "qemuGuestAgent"), "passwords are set through the guest agent"))
			}
		default:
			allErrs = append(allErrs, field.Required(p, "sshPublicKey or userPassword"))
		}
	}
	return allErrs
}
