package v1

// AccessCredential is a credential put into the guest. Exactly one member
// may be set.
type AccessCredential struct {
	// SSHPublicKey adds SSH public keys to the guest.
	// +optional
	SSHPublicKey *SSHPublicKeyAccessCredential `json:"sshPublicKey,omitempty" protobuf:"bytes,1,opt,name=sshPublicKey"`
	// UserPassword sets passwords of guest users.
	// +optional
	UserPassword *UserPasswordAccessCredential `json:"userPassword,omitempty" protobuf:"bytes,2,opt,name=userPassword"`
}

// SSHPublicKeyAccessCredential is where SSH public keys come from and how
// they reach the guest.
type SSHPublicKeyAccessCredential struct {
	// Source of the keys.
	Source SSHPublicKeyAccessCredentialSource `json:"source" protobuf:"bytes,1,opt,name=source"`
	// PropagationMethod is how they reach the guest.
	PropagationMethod SSHPublicKeyAccessCredentialPropagationMethod `json:"propagationMethod" protobuf:"bytes,2,opt,name=propagationMethod"`
}

// SSHPublicKeyAccessCredentialSource is where SSH public keys come from.
type SSHPublicKeyAccessCredentialSource struct {
	// Secret whose values are the keys.
	// +optional
	Secret *AccessCredentialSecretSource `json:"secret,omitempty" protobuf:"bytes,1,opt,name=secret"`
}

// SSHPublicKeyAccessCredentialPropagationMethod is how SSH public keys reach
// the guest. Exactly one member may be set.
type SSHPublicKeyAccessCredentialPropagationMethod struct {
	// ConfigDrive writes them into config drive metadata.
	// +optional
	ConfigDrive *ConfigDriveSSHPublicKeyAccessCredentialPropagation `json:"configDrive,omitempty" protobuf:"bytes,1,opt,name=configDrive"`
	// NoCloud writes them into NoCloud metadata.
	// +optional
	NoCloud *NoCloudSSHPublicKeyAccessCredentialPropagation `json:"noCloud,omitempty" protobuf:"bytes,2,opt,name=noCloud"`
	// QemuGuestAgent writes them into users' authorized_keys through the
	// guest agent, while the guest runs.
	// +optional
	QemuGuestAgent *QemuGuestAgentSSHPublicKeyAccessCredentialPropagation `json:"qemuGuestAgent,omitempty" protobuf:"bytes,3,opt,name=qemuGuestAgent"`
}

// ConfigDriveSSHPublicKeyAccessCredentialPropagation writes keys into config
// drive metadata.
type ConfigDriveSSHPublicKeyAccessCredentialPropagation struct{}

// NoCloudSSHPublicKeyAccessCredentialPropagation writes keys into NoCloud
// metadata.
type NoCloudSSHPublicKeyAccessCredentialPropagation struct{}

// QemuGuestAgentSSHPublicKeyAccessCredentialPropagation writes keys through
// the guest agent.
type QemuGuestAgentSSHPublicKeyAccessCredentialPropagation struct {
	// Users whose authorized_keys get the keys.
	// +listType=set
	Users []string `json:"users" protobuf:"bytes,1,rep,name=users"`
}

// UserPasswordAccessCredential is where passwords come from and how they
// reach the guest.
type UserPasswordAccessCredential struct {
	// Source of the passwords.
	Source UserPasswordAccessCredentialSource `json:"source" protobuf:"bytes,1,opt,name=source"`
	// PropagationMethod is how they reach the guest.
	PropagationMethod UserPasswordAccessCredentialPropagationMethod `json:"propagationMethod" protobuf:"bytes,2,opt,name=propagationMethod"`
}

// UserPasswordAccessCredentialSource is where passwords come from.
type UserPasswordAccessCredentialSource struct {
	// Secret mapping user names to passwords.
	// +optional
	Secret *AccessCredentialSecretSource `json:"secret,omitempty" protobuf:"bytes,1,opt,name=secret"`
}

// UserPasswordAccessCredentialPropagationMethod is how passwords reach the
// guest.
type UserPasswordAccessCredentialPropagationMethod struct {
	// QemuGuestAgent sets them through the guest agent.
	// +optional
	QemuGuestAgent *QemuGuestAgentUserPasswordAccessCredentialPropagation `json:"qemuGuestAgent,omitempty" protobuf:"bytes,1,opt,name=qemuGuestAgent"`
}

// QemuGuestAgentUserPasswordAccessCredentialPropagation sets passwords
// through the guest agent.
type QemuGuestAgentUserPasswordAccessCredentialPropagation struct{}

// AccessCredentialSecretSource names a secret of the VMI's namespace.
type AccessCredentialSecretSource struct {
	// SecretName is the secret's name.
	SecretName string `json:"secretName" protobuf:"bytes,1,opt,name=secretName"`
}
