package suggest

// rule is one entry of the catalogue.
//
// A rule matches when any one of its patterns does. A pattern is one or
// more parts joined by " & ", and matches when every part does; a part is a
// lowercase substring of the normalized text (lowercased, white space
// collapsed, typographic quotes and dashes made ASCII) or, after "re:", a
// regular expression over that text. Prefer substrings: they are cached per
// call and cost far less than a regular expression.
//
// For a text, the rules of its vendor are tried first and then the general
// ones (vendors empty), each group in table order; the first match wins. So
// within each group, order rules from specific to general.
type rule struct {
	name       string   // unique, for tests and for reading the table
	vendors    []string // empty: every vendor
	patterns   []string
	category   string // one of categories
	confidence string // high: unmistakable phrase; medium: clear pattern; low: weak hint
	cause      string // one or two short sentences, worded as a suggestion
	example    string // a text this very rule must decide (tested)
}

// catalogue is the rule table. Its wording stays a suggestion ("looks
// like", "possibly", "may"), never a diagnosis, and each cause is at most
// 200 characters and ends with a period (tested).
var catalogue = []rule{
	// ---- Vendor-specific rules ----

	// Veeam Backup & Replication
	{
		name:       "veeam-repository-open",
		vendors:    []string{"veeam"},
		patterns:   []string{"failed to open backup repository", "failed to open repository", "backup repository & unavailable"},
		category:   "storage",
		confidence: "high",
		cause:      "The Veeam repository looks unreachable: possibly its NAS or share is offline, renamed, or no longer accepts the repository account. Check it from the Veeam console.",
		example:    `Failed to open backup repository HF-REPO01: the share \\hf-nas02\veeam could not be reached (the network path was not found).`,
	},
	{
		name:       "veeam-truncate-rights",
		vendors:    []string{"veeam"},
		patterns:   []string{"truncat & log & sysadmin", "truncat & log & permission", "truncat & log & access is denied", "truncat & log & access denied"},
		category:   "credentials",
		confidence: "high",
		cause:      "The guest account Veeam uses probably lacks SQL Server rights to truncate logs; consider granting it the sysadmin role or choosing a guest account that has it.",
		example:    `Unable to truncate transaction logs on BW-SQL02: the account BWDENTAL\svc-backup is not a member of the sysadmin server role.`,
	},
	{
		name:       "veeam-processing-resources",
		vendors:    []string{"veeam"},
		patterns:   []string{"allocate processing resources"},
		category:   "configuration",
		confidence: "medium",
		cause:      "Possibly no proxy or repository task slot was free when the job started (busy, offline or limited); check proxy availability and the concurrent task limits.",
		example:    "Unable to allocate processing resources. Error: Job session has been stopped by user.",
	},
	{
		name:       "veeam-storage-metadata",
		vendors:    []string{"veeam"},
		patterns:   []string{"storage metadata & corrupt"},
		category:   "storage",
		confidence: "high",
		cause:      "The backup file's metadata looks damaged, possibly after a storage fault or an interrupted write; consider a health check and a new active full.",
		example:    "All instances of the storage metadata are corrupted.",
	},
	{
		name:       "veeam-proxy-offline",
		vendors:    []string{"veeam"},
		patterns:   []string{"proxy & offline", "proxy & unavailable", "proxy & not available", "proxy & unreachable"},
		category:   "agent",
		confidence: "medium",
		cause:      "A Veeam backup proxy appears to be offline or unreachable; check that the proxy server is up and its Veeam services are running.",
		example:    "Backup proxy VBR-PX02 is offline.",
	},

	// Acronis Cyber Protect
	{
		name:    "acronis-datacenter",
		vendors: []string{"acronis"},
		patterns: []string{
			"data center & timed out", "data center & not reachable", "data center & unreachable",
			"data center & connect", "datacenter & timed out", "datacenter & connect",
		},
		category:   "network",
		confidence: "high",
		cause:      "The machine's link to the Acronis cloud data center looks interrupted; possibly an internet outage, or a firewall or proxy blocking the agent's outbound traffic.",
		example:    "The backup location 'Cloud storage' is not reachable: the connection to the data center timed out after 300 seconds.",
	},
	{
		name:       "acronis-mms",
		vendors:    []string{"acronis"},
		patterns:   []string{"managed machine service"},
		category:   "agent",
		confidence: "medium",
		cause:      "The Acronis Managed Machine Service on the machine may be stopped or hung; check that it is running and restart it if needed.",
		example:    "The Acronis Managed Machine Service is not responding.",
	},

	// Hornetsecurity VM Backup (Altaro)
	{
		name:       "altaro-backup-location",
		vendors:    []string{"altaro"},
		patterns:   []string{"backup location & not connected", "backup location & disconnected", "backup location & plug in"},
		category:   "storage",
		confidence: "high",
		cause:      "The backup drive for this location looks unplugged or swapped for another disk; reconnect it, or add the new drive to the backup location.",
		example:    "The backup location 'HF-USB-02' is not connected; plug in the drive or choose another backup location.",
	},
	{
		name:       "altaro-host-agent",
		vendors:    []string{"altaro"},
		patterns:   []string{"host agent & offline", "host agent & not running", "host agent & not responding", "host agent & connect"},
		category:   "agent",
		confidence: "medium",
		cause:      "The backup agent on the Hyper-V host may be stopped or unreachable; check that the host is up and its VM Backup agent service is running.",
		example:    "Could not connect to the Host Agent on HV-NODE2.",
	},

	// Veritas Backup Exec
	{
		name:       "backupexec-agent-lost",
		vendors:    []string{"backupexec"},
		patterns:   []string{"0xe000fe30", "remote agent & lost", "remote agent & communication"},
		category:   "network",
		confidence: "high",
		cause:      "The media server seems to have lost contact with the Remote Agent mid-job; possibly a network drop, the agent service restarting, or a firewall closing the connection.",
		example:    "The connection to the Remote Agent on RV-SQL02 was lost during the operation.",
	},
	{
		name:       "backupexec-skipped-folder",
		vendors:    []string{"backupexec"},
		patterns:   []string{"0xe0008443", "subfolders it contains were skipped", "could not be accessed & skipped"},
		category:   "source",
		confidence: "high",
		cause:      "A selected folder possibly no longer exists or is unreadable for the Backup Exec logon account; check the path and its permissions, or update the selections.",
		example:    `Folder \\RV-FS02\D$\Scans\Temp could not be accessed; the files and subfolders it contains were skipped.`,
	},
	{
		name:       "backupexec-corrupt-data",
		vendors:    []string{"backupexec"},
		patterns:   []string{"0xe000fe36", "corrupt data encountered"},
		category:   "source",
		confidence: "medium",
		cause:      "Backup Exec seems to have met data it could not read cleanly, possibly a damaged file on the source disk; check the job log for the file and run a disk check.",
		example:    "Final error: 0xe000fe36 - Corrupt data encountered. See the job log for details.",
	},
	{
		name:       "backupexec-attach",
		vendors:    []string{"backupexec"},
		patterns:   []string{"0xe000848c", "unable to attach to"},
		category:   "credentials",
		confidence: "medium",
		cause:      "The logon account possibly lacks rights to the selected resource, or the resource is offline; check the Backup Exec logon account for this server.",
		example:    "Final error: 0xe000848c - Unable to attach to a resource.",
	},
	{
		name:       "backupexec-media",
		vendors:    []string{"backupexec"},
		patterns:   []string{"appendable media", "overwritable media", "insert media", "no media"},
		category:   "storage",
		confidence: "medium",
		cause:      "The job possibly waited for usable media; check that the storage offers overwritable or appendable media and that the media set allows overwriting.",
		example:    "The job was cancelled because no overwritable media was available in time.",
	},

	// N-able Cove Data Protection
	{
		name:       "cove-token",
		vendors:    []string{"cove"},
		patterns:   []string{"authentication token"},
		category:   "credentials",
		confidence: "high",
		cause:      "The device's authentication token for the Cove cloud looks expired or revoked; re-authenticate the device in Backup Manager by re-entering its credentials.",
		example:    "Could not connect to the cloud storage node: the device's authentication token was rejected (expired on 2026-01-28).",
	},
	{
		name:       "cove-storage-node",
		vendors:    []string{"cove"},
		patterns:   []string{"storage node"},
		category:   "network",
		confidence: "medium",
		cause:      "The device possibly could not reach the Cove cloud storage node; check its internet access and that the firewall allows Backup Manager's outbound traffic.",
		example:    "Unable to connect to the storage node: the operation timed out.",
	},
	{
		name:       "cove-speedvault",
		vendors:    []string{"cove"},
		patterns:   []string{"speedvault", "lsv & unavailable", "lsv & not available", "lsv & full"},
		category:   "storage",
		confidence: "medium",
		cause:      "The LocalSpeedVault looks unavailable or full; check that its share or disk is reachable and has free space.",
		example:    "LocalSpeedVault is unavailable: the path \\\\nas01\\lsv could not be accessed.",
	},

	// Datto BCDR
	{
		name:       "datto-agent-port",
		vendors:    []string{"datto"},
		patterns:   []string{"25568", "datto agent & refused", "datto agent & connect"},
		category:   "agent",
		confidence: "high",
		cause:      "The Datto agent service on the protected machine looks stopped, or a firewall blocks port 25568; check that the service is running and the port is open.",
		example:    "Unable to connect to the Datto agent on BW-FS01 (port 25568): the connection was refused.",
	},

	// Synology Active Backup for Business
	{
		name:    "synology-c2-auth",
		vendors: []string{"synology"},
		patterns: []string{
			"c2 & authenticat", "c2 & sign in", "c2 & sign-in", "c2 & credential", "c2 & password",
			"c2 & token", "c2 & unauthori",
		},
		category:   "credentials",
		confidence: "high",
		cause:      "The sign-in to the Synology C2 account looks rejected; possibly its password changed, two-factor sign-in was enabled, or the session expired. Sign in again.",
		example:    "Unable to connect to the backup destination Synology C2 Storage: authentication failed for the target account.",
	},

	// NAKIVO Backup & Replication
	{
		name:       "nakivo-repository",
		vendors:    []string{"nakivo"},
		patterns:   []string{"repository & detached", "repository & inaccessible", "repository & not accessible", "repository & offline"},
		category:   "storage",
		confidence: "high",
		cause:      "The NAKIVO repository looks detached or offline; possibly its NAS, disk or share is down. Check it in the NAKIVO console and re-attach it once reachable.",
		example:    `The backup repository "HF-Repo-NAS" is not accessible: the repository is detached or its storage is offline.`,
	},
	{
		name:    "nakivo-transporter",
		vendors: []string{"nakivo"},
		patterns: []string{
			"transporter & not available", "transporter & unavailable", "transporter & inaccessible",
			"transporter & offline", "transporter & connect", "transporter & not responding",
		},
		category:   "agent",
		confidence: "high",
		cause:      "A NAKIVO Transporter looks offline or unreachable; check that the Transporter service is running on that machine and its ports are open.",
		example:    "The Transporter \"onboard-tr\" is inaccessible.",
	},

	// MSP360 Backup
	{
		name:    "msp360-storage-account",
		vendors: []string{"msp360"},
		patterns: []string{
			"storage account & denied", "storage account & access key", "storage account & secret",
			"storage account & credential", "storage account & invalid",
		},
		category:   "credentials",
		confidence: "high",
		cause:      "The storage account's access key looks invalid, disabled or rotated; update the key in MSP360's storage account settings and check the bucket's permissions.",
		example:    "Access to storage account 'RV-Wasabi-US' was denied: the access key is no longer valid or has been disabled.",
	},

	// Macrium Reflect (Windows error codes as Macrium prints them)
	{
		name:       "macrium-error-64",
		vendors:    []string{"macrium"},
		patterns:   []string{`error & re:\berror:? ?64\b`, "network name is no longer available", "network share is no longer available"},
		category:   "network",
		confidence: "high",
		cause:      "The connection to the network share seems to have dropped mid-backup (Windows error 64); possibly the NAS slept or rebooted, or the network link is unstable.",
		example:    `Unable to write to the destination \\hf-nas01\images: the network share is no longer available (error 64).`,
	},
	{
		name:       "macrium-error-112",
		vendors:    []string{"macrium"},
		patterns:   []string{`error & re:\berror:? ?112\b`},
		category:   "storage",
		confidence: "high",
		cause:      "The destination disk looks full (Windows error 112); free space there, or tighten the retention rules so older images are purged first.",
		example:    "Backup aborted! - Write operation failed - Error 112.",
	},
	{
		name:       "macrium-error-23",
		vendors:    []string{"macrium"},
		patterns:   []string{`error & re:\berror:? ?23\b`},
		category:   "source",
		confidence: "medium",
		cause:      "Possibly bad sectors on the disk being imaged (read error 23); consider running chkdsk /r on it and checking the disk's SMART health.",
		example:    "Read failed - 23 - Data error. Error 23.",
	},
	{
		name:       "macrium-verify",
		vendors:    []string{"macrium"},
		patterns:   []string{"md5", "verif & fail"},
		category:   "storage",
		confidence: "medium",
		cause:      "The image possibly did not read back as written; suspect the target disk, its cable or USB port, or memory. Re-run the verify and test that hardware.",
		example:    "Verify failed: the MD5 hash of block 51234 does not match.",
	},

	// ---- General rules, from specific to general ----

	// Licence
	{
		name:       "license-expired",
		patterns:   []string{"license & expired", "licence & expired", "subscription & expired", "trial & expired", "license & expiry", "licence & expiry"},
		category:   "license",
		confidence: "high",
		cause:      "The product's licence or subscription looks expired; renew it or apply the new key, and the next run should proceed.",
		example:    "The license for this product has expired.",
	},
	{
		name: "license-exceeded",
		patterns: []string{
			"license & exceeded", "licence & exceeded", "license & limit", "licence & limit",
			"license & insufficient", "licence & insufficient", "not enough licenses", "not enough licences",
			"license & reached", "licence & reached",
		},
		category:   "license",
		confidence: "high",
		cause:      "More machines or workloads seem to be protected than the licence covers; free a licence from a retired machine or extend the licence.",
		example:    "License limit exceeded: 26 of 25 workstations are protected.",
	},
	{
		name: "license-missing",
		patterns: []string{
			"no license", "no licence", "no valid license", "no valid licence", "not licensed", "not licenced",
			"unlicensed", "license & not found", "license & invalid", "licence & invalid", "license & not assigned",
		},
		category:   "license",
		confidence: "medium",
		cause:      "The machine appears to have no valid licence assigned; assign one in the management console or check the licence server.",
		example:    "The machine is not licensed for backup.",
	},

	// Configuration that shows up as other errors
	{
		name:       "clock-skew",
		patterns:   []string{"requesttimetooskewed", "time too skewed", "clock skew", "clock & out of sync", "time difference & too large"},
		category:   "configuration",
		confidence: "high",
		cause:      "The machine's clock looks out of step with the storage service, which then rejects requests; check its time zone and time synchronisation (NTP).",
		example:    "RequestTimeTooSkewed: The difference between the request time and the current time is too large.",
	},
	{
		name: "certificate",
		patterns: []string{
			"certificate & expired", "certificate & not trusted", "certificate & untrusted", "certificate & invalid",
			"certificate & verify", "certificate & revoked", "ssl & handshake", "tls & handshake",
		},
		category:   "configuration",
		confidence: "medium",
		cause:      "A TLS certificate on the target or the backup server looks expired, replaced or untrusted; check the certificate and re-trust the server if it changed.",
		example:    "Secure connection failed: the server certificate has expired.",
	},

	// Credentials
	{
		name:       "sysadmin-role",
		patterns:   []string{"sysadmin & member", "sysadmin & role"},
		category:   "credentials",
		confidence: "high",
		cause:      "The account used for SQL Server processing probably lacks the sysadmin role; grant it, or use an account that has it for application processing.",
		example:    "Failed to process SQL Server instance: the account svc-backup is not a member of the sysadmin server role.",
	},
	{
		name:       "encryption-password",
		patterns:   []string{"encryption & password", "encryption key & invalid", "encryption key & wrong", "encryption key & incorrect", "passphrase"},
		category:   "credentials",
		confidence: "medium",
		cause:      "The backup's encryption password or key may not match the one the backup set was created with; check the password stored in the job.",
		example:    "The encryption password is incorrect.",
	},
	{
		name: "password-rejected",
		patterns: []string{
			"password authentication failed", "incorrect password", "wrong password", "bad password",
			"invalid password", "password is incorrect", "password & expired", "password & must be changed",
			"invalid username or password", "invalid user name or password", "user name or password is incorrect",
			"username or password is incorrect",
		},
		category:   "credentials",
		confidence: "high",
		cause:      "The password the job uses looks wrong or expired, possibly changed on the server after the job was set up; update the stored credentials.",
		example:    `pg_dump: connection to server at "rv-db01" (10.20.0.15), port 5432 failed: password authentication failed for user "backup"`,
	},
	{
		name: "logon-failure",
		patterns: []string{
			"logon failure", "login failed", "logon failed", "log on failed", "log-on failed", "failed to log on",
			"unable to log on", "could not log on", "0x8007052e", "access denied for user",
		},
		category:   "credentials",
		confidence: "high",
		cause:      "The account the job logs on with looks rejected; possibly its password changed, it was disabled, or it lacks logon rights on that machine.",
		example:    `Logon failure (0x8007052E) for BWDENTAL\svc-backup.`,
	},
	{
		name: "token-rejected",
		patterns: []string{
			"token & expired", "token & rejected", "token & revoked", "token & invalid", "token & not valid",
			"refresh token", "reauthoriz", "re-authoriz", "reauthenticat", "re-authenticat",
		},
		category:   "credentials",
		confidence: "high",
		cause:      "The sign-in token the backup uses looks expired or revoked; sign in again or re-authorise the connection, then rerun the job.",
		example:    "Microsoft 365 access token has expired; please re-authorize the organization.",
	},
	{
		name: "access-key",
		patterns: []string{
			"access key & valid", "access key & disabled", "access key & denied", "access key & expired",
			"invalidaccesskeyid", "signaturedoesnotmatch", "secret key & valid", "secret key & wrong",
			"signature & does not match", "api key & valid", "api key & expired", "api key & revoked",
		},
		category:   "credentials",
		confidence: "high",
		cause:      "The storage access key or its secret looks invalid, disabled or rotated; update the key pair in the job's storage settings.",
		example:    "InvalidAccessKeyId: The AWS access key Id you provided does not exist in our records.",
	},
	{
		name:       "guest-credentials",
		patterns:   []string{"guest credentials", "guest os credentials", "guest & credentials", "guest & access denied", "guest & access is denied"},
		category:   "credentials",
		confidence: "high",
		cause:      "The account the job uses inside the VM looks rejected; possibly its password changed or it lacks local admin rights. Update the job's guest credentials.",
		example:    "KL-PRINT01: Application-aware mode could not be used because guest credentials were rejected; the VM was processed in crash-consistent mode.",
	},
	{
		name: "account-disabled",
		patterns: []string{
			"account & locked out", "account is locked", "account & disabled", "account has expired",
			"account & expired", "user account & disabled", "user is disabled", "account does not exist",
			"user does not exist", "no such user", "unknown user",
		},
		category:   "credentials",
		confidence: "high",
		cause:      "The account the job uses appears locked, disabled, expired or deleted; unlock or re-enable it, or give the job another service account.",
		example:    "The referenced account is currently locked out and may not be logged on to.",
	},
	{
		name:       "mfa",
		patterns:   []string{"two-factor", "2-step", "multi-factor", "mfa", "2fa"},
		category:   "credentials",
		confidence: "medium",
		cause:      "A second sign-in factor seems to be required for the backup account now; use an app password or an account set up for unattended sign-in.",
		example:    "Sign-in blocked: multi-factor authentication is required for this account.",
	},
	{
		name: "authentication-failed",
		patterns: []string{
			"authenticat & fail", "authenticat & rejected", "authenticat & error", "not authenticated",
			"authentication required", "unable to authenticate", "could not authenticate",
		},
		category:   "credentials",
		confidence: "medium",
		cause:      "Authentication looks rejected by the target; possibly the stored credentials changed or expired. Check the account and re-enter its password or key.",
		example:    "Authentication failed for user backup@nas02.",
	},
	{
		name: "access-denied",
		patterns: []string{
			"access denied", "access is denied", "access & was denied", "permission denied", "forbidden",
			"unauthorized", "unauthorised", "0x80070005", "insufficient privileges", "insufficient permissions",
			"insufficient rights", "not authorized", "not authorised",
		},
		category:   "credentials",
		confidence: "medium",
		cause:      "The account the job uses seems to lack permission on the source or target; check its rights there and whether a password or policy changed.",
		example:    "Error: Access is denied. (0x80070005)",
	},
	{
		name:       "credentials-general",
		patterns:   []string{"credential"},
		category:   "credentials",
		confidence: "medium",
		cause:      "The stored credentials may be wrong or out of date; check the account the job uses and re-enter its password.",
		example:    "Please check the credentials configured for the backup destination.",
	},

	// Storage space
	{
		name:       "shadow-storage",
		patterns:   []string{"shadow copy storage", "shadow storage", "0x8004231f", "diff area", "diffarea"},
		category:   "snapshot",
		confidence: "high",
		cause:      "The volume's shadow copy storage looks too small or the volume nearly full; consider freeing space or raising the shadow storage limit (vssadmin).",
		example:    "Insufficient storage available to create either the shadow copy storage file or other shadow copy data.",
	},
	{
		name: "destination-full",
		patterns: []string{
			"not enough space", "not enough free space", "not enough disk space", "insufficient space",
			"insufficient disk space", "insufficient free space", "no space left", "out of space", "out of disk space",
			"disk full", "disk is full", "volume is full", "destination is full", "target is full", "drive is full",
			"ran out of space", "0x80070070", "no free space", "low disk space", "storage is full",
		},
		category:   "storage",
		confidence: "high",
		cause:      "The backup destination looks full; free space there, or check that retention is removing old backups, before the next run.",
		example:    "There is not enough space on the disk.",
	},
	{
		name: "quota",
		patterns: []string{
			"quota", "storage limit", "capacity limit", "storage allowance", "exceeds the storage",
			"exceeded the storage",
		},
		category:   "storage",
		confidence: "medium",
		cause:      "The storage quota for this account or device looks used up; raise the quota, or trim retention so older backups are removed.",
		example:    "Upload failed: storage quota exceeded for this account.",
	},

	// Agents
	{
		name: "agent-offline",
		patterns: []string{
			"agent & offline", "agent & not responding", "agent & unresponsive", "agent & not running",
			"agent & stopped", "agent & not reachable", "agent & unreachable", "agent & refused",
			"agent & unable to connect", "agent & could not connect", "agent & cannot connect",
			"agent & failed to connect", "agent & not connected", "agent & disconnected",
			"agent & not checked in", "agent & has not checked in",
		},
		category:   "agent",
		confidence: "medium",
		cause:      "The backup agent on the machine looks stopped or unreachable; check that the machine is on and the agent service is running, then rerun the job.",
		example:    "The agent on PC-RECEPTION is offline.",
	},
	{
		name: "agent-version",
		patterns: []string{
			"agent & outdated", "agent & out of date", "agent & version", "agent & upgrade", "agent & update required",
		},
		category:   "agent",
		confidence: "medium",
		cause:      "The agent on the machine may be older than the backup server expects; consider updating the agent to the server's version.",
		example:    "The agent version is not supported by this server; upgrade the agent.",
	},
	{
		name: "device-offline",
		patterns: []string{
			"not checked in", "device is offline", "machine is offline", "computer is offline",
			"endpoint is offline", "client is offline", "device & went offline", "machine & went offline",
		},
		category:   "agent",
		confidence: "medium",
		cause:      "The protected machine seems to have been off or offline at backup time; check that it is powered on and connected, and that its backup software is running.",
		example:    "The device has not checked in for 3 days.",
	},
	{
		name: "service-stopped",
		patterns: []string{
			"service & not running", "service & stopped", "service & terminated unexpectedly",
			"service & not started", "service & failed to start", "service & is not responding",
		},
		category:   "agent",
		confidence: "medium",
		cause:      "A backup service on the machine looks stopped or crashed; check that it is running and set to start automatically.",
		example:    "The backup service is not running on HF-WS07.",
	},

	// Network (the clear cases; weaker hints come last)
	{
		name: "connection-lost",
		patterns: []string{
			"lost connection", "lost the connection", "connection & lost", "connection & dropped",
			"communication failure", "communications failure", "disconnected during",
		},
		category:   "network",
		confidence: "medium",
		cause:      "The connection seems to have dropped during the run; possibly an unstable link, a VPN or firewall timeout, or the other side restarting.",
		example:    "The connection to the server was lost while transferring data.",
	},
	{
		name:       "connection-refused",
		patterns:   []string{"connection refused", "connection was refused", "actively refused", "econnrefused"},
		category:   "network",
		confidence: "medium",
		cause:      "The target host answered but refused the connection; possibly its service is not running or a firewall rejects the port.",
		example:    "connect to 10.0.0.12:22 failed: Connection refused.",
	},
	{
		name: "connection-timeout",
		patterns: []string{
			"connection & timed out", "connection timeout", "connect timeout", "etimedout",
			"timed out & connect", "connection attempt failed",
		},
		category:   "network",
		confidence: "medium",
		cause:      "The connection to the target seems to have timed out; possibly the host is down, the internet or VPN link failed, or a firewall drops the traffic.",
		example:    "The connection timed out while contacting backup.example.net.",
	},
	{
		name: "connection-reset",
		patterns: []string{
			"connection reset", "connection was reset", "forcibly closed", "econnreset", "broken pipe",
			"connection & aborted", "connection & closed unexpectedly", "unexpectedly closed",
		},
		category:   "network",
		confidence: "medium",
		cause:      "The connection looks reset mid-transfer; possibly an unstable link, a firewall or security appliance closing it, or the other side restarting.",
		example:    "An existing connection was forcibly closed by the remote host.",
	},
	{
		name: "network-path",
		patterns: []string{
			"network path was not found", "network path not found", "network name cannot be found",
			"network name was not found", "network name is no longer available", "network share is no longer available",
			"0x80070035", "0x80070040", "0x80070043", "rpc server is unavailable", "0x800706ba",
		},
		category:   "network",
		confidence: "high",
		cause:      "The network share or server looks unreachable by name; possibly it is off, renamed, or blocked by a firewall. Check that the path opens from the backup machine.",
		example:    `The network path was not found: \\nas01\backup`,
	},
	{
		name: "host-unreachable",
		patterns: []string{
			"host unreachable", "host is unreachable", "no route to host", "network is unreachable",
			"destination unreachable", "ehostunreach", "not reachable", "unreachable", "could not be reached",
			"cannot be reached",
		},
		category:   "network",
		confidence: "medium",
		cause:      "The target looks unreachable over the network; possibly it is powered off, its address changed, or a router, VPN or firewall blocks the way.",
		example:    "Host backup-nas.local is unreachable.",
	},
	{
		name: "dns",
		patterns: []string{
			"could not resolve", "cannot resolve", "unable to resolve", "failed to resolve", "name resolution",
			"name or service not known", "no such host", "host not found", "getaddrinfo", "dns lookup",
			"dns resolution", "dns query", "dns error", "dns failure", "dns server", "dns name", "dns record",
		},
		category:   "network",
		confidence: "medium",
		cause:      "The host name possibly could not be resolved; check the DNS settings on the backup machine and that the name still exists.",
		example:    "Could not resolve host: s3.eu-central-1.wasabisys.com",
	},
	{
		name:       "firewall",
		patterns:   []string{"firewall", "port & blocked", "port & closed"},
		category:   "network",
		confidence: "medium",
		cause:      "A firewall may be blocking the connection the backup needs; check the rules for the product's ports on both ends.",
		example:    "The request was blocked by a firewall.",
	},

	// Storage that is missing or failing
	{
		name: "usb-not-connected",
		patterns: []string{
			"plug in", "not connected & drive", "not connected & disk", "not connected & location",
			"not connected & destination", "usb & not found", "usb & disconnected", "usb & removed",
			"drive & not found", "disk & not found", "drive was removed", "disk was removed",
		},
		category:   "storage",
		confidence: "medium",
		cause:      "The backup drive looks unplugged, swapped or asleep; reconnect it, or register a rotated drive with the job, and rerun the backup.",
		example:    "The backup disk was not found. Make sure the USB drive is plugged in.",
	},
	{
		name: "repository-unavailable",
		patterns: []string{
			"repository & offline", "repository & not accessible", "repository & inaccessible",
			"repository & unavailable", "repository & not available", "repository & detached",
			"repository & not found", "repository & does not exist", "repository & failed to open", "destination & offline",
			"destination & not available", "destination & unavailable", "target & offline",
			"storage & offline", "storage & unavailable", "storage & not available", "nas & offline",
			"backup location & not available", "backup location & unavailable", "bucket & not exist",
			"nosuchbucket", "bucket & not found", "container & not found",
		},
		category:   "storage",
		confidence: "medium",
		cause:      "The backup destination looks offline or missing; possibly its NAS, disk or bucket is down, renamed or detached. Check that it is online and reachable.",
		example:    "The destination storage is offline.",
	},
	{
		name:       "read-only",
		patterns:   []string{"read-only", "read only", "write-protected", "write protected"},
		category:   "storage",
		confidence: "medium",
		cause:      "The destination appears read-only; possibly its volume was remounted read-only after errors, or a write protection or lock applies. Check the target's health.",
		example:    "The media is write protected.",
	},
	{
		name: "write-failed",
		patterns: []string{
			"unable to write", "failed to write", "could not write", "cannot write", "write error",
			"write operation failed", "i/o device error", "device is not ready", "0x8007045d",
		},
		category:   "storage",
		confidence: "medium",
		cause:      "Writing to the backup destination seems to have failed; possibly a failing disk or NAS, a loose cable, or the target dropping away mid-run.",
		example:    "Failed to write data to the target file.",
	},

	// Integrity (verification, tests, corruption)
	{
		name: "screenshot",
		patterns: []string{
			"screenshot & fail", "screenshot & could not", "screenshot & unsuccessful", "screenshot & error",
			"screenshot & did not",
		},
		category:   "configuration",
		confidence: "low",
		cause:      "The test boot possibly did not finish before the screenshot (updates, slow start) or hit a boot problem; view the screenshot and consider more wait time.",
		example:    "Screenshot verification failed for BW-FS01.",
	},
	{
		name: "checksum",
		patterns: []string{
			"checksum", "crc mismatch", "crc error", "hash mismatch", "hash & does not match", "hash & did not match",
		},
		category:   "storage",
		confidence: "medium",
		cause:      "Data read back from the backup possibly differs from what was written; suspect the backup disk or NAS, and check its health before trusting these restore points.",
		example:    "Checksum mismatch in block 88213 of the backup file.",
	},
	{
		name: "corrupt-backup",
		patterns: []string{
			"backup & corrupt", "archive & corrupt", "image & corrupt", "restore point & corrupt",
			"recovery point & corrupt", "backup & damaged", "archive & damaged", "chain & broken",
		},
		category:   "storage",
		confidence: "medium",
		cause:      "The stored backup looks damaged, possibly from a storage fault or an interrupted write; check the backup storage and consider starting a fresh full backup.",
		example:    "The backup archive is corrupted.",
	},
	{
		name: "verification-failed",
		patterns: []string{
			"verif & fail", "failed to verify", "verif & error", "integrity check & fail", "integrity & error",
			"test restore & fail", "recovery test & fail", "health check & fail",
		},
		category:   "storage",
		confidence: "medium",
		cause:      "The backup could not be read back cleanly; possibly damaged data on the backup storage or an interrupted write. Rerun the check and test the target disk.",
		example:    "Backup verification failed.",
	},

	// Snapshots and VSS
	{
		name: "checkpoint",
		patterns: []string{
			"checkpoint & could not", "checkpoint & failed", "checkpoint & unable", "checkpoint & cannot",
			"checkpoint & error",
		},
		category:   "snapshot",
		confidence: "high",
		cause:      "Hyper-V probably could not make an application-consistent checkpoint; check Integration Services and the VSS writers inside the VM (vssadmin list writers).",
		example:    "BW-PMS01: An application-consistent checkpoint could not be taken, so a crash-consistent backup was taken instead.",
	},
	{
		name: "vss-writer",
		patterns: []string{
			"writer & failed", "writer & stable state", "writer & unstable", "writer & timed out",
			"writer & retryable", "writer & error", "0x800423f3", "0x800423f4", "0x800423f2",
		},
		category:   "snapshot",
		confidence: "high",
		cause:      "A VSS writer (here the one named) looks failed or unstable; restarting its service or the server usually clears it. Check with vssadmin list writers.",
		example:    "The VSS writer 'SqlServerWriter' was in a failed state; this recovery point was taken as crash-consistent.",
	},
	{
		name: "snapshot-failed",
		patterns: []string{
			"failed to create snapshot", "failed to create vm snapshot", "failed to create a snapshot",
			"snapshot creation failed", "could not create snapshot", "could not create a snapshot",
			"unable to create snapshot", "unable to create a snapshot", "cannot create a snapshot",
			"cannot create snapshot", "snapshot & could not be created", "shadow copy & could not be created",
			"failed to create shadow copy", "failed to create a shadow copy", "unable to create shadow copy",
			"unable to create a shadow copy", "0x8004230f", "quiesc",
		},
		category:   "snapshot",
		confidence: "medium",
		cause:      "The snapshot before the backup possibly failed; check the VSS writers and free space on the volumes, or the hypervisor's snapshot and guest tools.",
		example:    "Failed to create VM snapshot: operation timed out.",
	},
	{
		name: "snapshot-consolidation",
		patterns: []string{
			"consolidat & snapshot", "snapshot & consolidat", "orphaned snapshot", "too many snapshots",
			"snapshot & chain",
		},
		category:   "snapshot",
		confidence: "medium",
		cause:      "Leftover VM snapshots may be blocking new ones; consider consolidating or removing old snapshots on the hypervisor.",
		example:    "Virtual machine disks consolidation is needed before a new snapshot can be taken.",
	},
	{
		name: "crash-consistent",
		patterns: []string{
			"crash-consistent", "crash consistent", "application-aware & could not", "application-aware & failed",
			"application-consistent & could not", "application consistent & could not",
		},
		category:   "snapshot",
		confidence: "medium",
		cause:      "The backup possibly fell back to crash-consistent because VSS inside the machine failed; check its VSS writers so databases are captured cleanly.",
		example:    "The VM was backed up in crash-consistent mode.",
	},
	{
		name:       "vss-general",
		patterns:   []string{"vss", "volume shadow copy", "shadow copy"},
		category:   "snapshot",
		confidence: "medium",
		cause:      "The Volume Shadow Copy service may have failed during the snapshot; check the VSS writers and the Windows event log on that machine.",
		example:    "VSS error: the operation could not be completed.",
	},

	// Source data
	{
		name:       "locked-by-another-process",
		patterns:   []string{"another process", "sharing violation", "0x80070020"},
		category:   "source",
		confidence: "high",
		cause:      "Files were likely held open by another program (such as Outlook or a database) and VSS did not cover them; consider closing the app or enabling snapshots.",
		example:    `3 files were skipped because another process had locked them, for example C:\Users\reception\AppData\Local\Microsoft\Outlook\reception@brightwater-dental.example.ost.`,
	},
	{
		name: "file-locked",
		patterns: []string{
			"locked by", "file is locked", "files are locked", "file was locked", "files were locked",
			"in use by", "is in use", "being used by", "file in use", "files in use",
		},
		category:   "source",
		confidence: "medium",
		cause:      "Some files look like they were open and locked during the backup; consider backing them up with VSS or when the program using them is closed.",
		example:    "The file D:\\Data\\ledger.mdb is locked by user FRONTDESK.",
	},
	{
		name: "online-only",
		patterns: []string{
			"online-only", "online only", "placeholder", "files on-demand", "files on demand",
			"cloud file provider", "0x8007016a", "recall on data access",
		},
		category:   "source",
		confidence: "high",
		cause:      "These look like cloud-only placeholders (such as OneDrive Files On-Demand); set the folder to always keep files on the device, or back up that cloud account directly.",
		example:    `Some files could not be backed up: 14 files in C:\Users\dr.okafor\OneDrive - Brightwater Dental are online-only placeholders and were skipped.`,
	},
	{
		name: "changed-while-read",
		patterns: []string{
			"changed while", "changed as we read", "modified while", "changed during", "modified during",
		},
		category:   "source",
		confidence: "high",
		cause:      "Files were likely being written while they were read, so copies may be inconsistent; enable snapshots (VSS) or back them up when the app is idle.",
		example:    "7 files changed while being read and were copied in an inconsistent state.",
	},
	{
		name: "vm-not-found",
		patterns: []string{
			`not found & re:\bvms?\b`, `no longer exists & re:\bvms?\b`, `does not exist & re:\bvms?\b`,
			"virtual machine & not found", "virtual machine & no longer exists", "virtual machine & does not exist",
			"could not find the virtual machine", "not found in the inventory",
		},
		category:   "source",
		confidence: "medium",
		cause:      "The VM seems to have been renamed, deleted or moved to a host the job does not cover; update the job's VM selection.",
		example:    "Virtual machine BW-APP03 was not found on host HV01.",
	},
	{
		name:       "path-too-long",
		patterns:   []string{"path is too long", "path too long", "file name is too long", "filename too long", "name too long"},
		category:   "source",
		confidence: "medium",
		cause:      "Some paths possibly exceed the length the backup can read; shorten deeply nested folder or file names, or enable long-path support.",
		example:    "The file name is too long.",
	},
	{
		name:       "bad-sectors",
		patterns:   []string{"cyclic redundancy check", "bad sector", "bad block", "unreadable sector"},
		category:   "source",
		confidence: "medium",
		cause:      "Possibly bad sectors on the disk being read; consider running chkdsk /r (or fsck) and checking the disk's SMART health.",
		example:    "Data error (cyclic redundancy check).",
	},
	{
		name: "path-not-found",
		patterns: []string{
			"could not be accessed", "cannot be accessed", "path not found", "cannot find the path",
			"cannot find the file", "no such file or directory", "does not exist", "could not be found",
			"cannot be found", "was not found", "were not found",
		},
		category:   "source",
		confidence: "medium",
		cause:      "A selected file or folder possibly no longer exists or was moved or renamed; check the job's selection against the source.",
		example:    "The system cannot find the path specified: E:\\Projects",
	},

	// Schedule
	{
		name: "job-disabled",
		patterns: []string{
			"job is disabled", "job & was disabled", "job & has been disabled", "schedule & disabled",
			"plan & disabled", "disabled job", "task is disabled",
		},
		category:   "schedule",
		confidence: "high",
		cause:      "The job or its schedule appears to be disabled, so it may not run as planned; re-enable it if that is not intended.",
		example:    "The job is disabled and was not started.",
	},
	{
		name: "overlapping-run",
		patterns: []string{
			"already running", "another instance", "still running", "previous session", "previous run",
			"previous job", "overlapping", "already in progress",
		},
		category:   "schedule",
		confidence: "medium",
		cause:      "A previous run possibly was still going when this one was due; consider spacing the schedule out or shortening the earlier run.",
		example:    "The backup did not start because another instance is already running.",
	},
	{
		name: "missed-window",
		patterns: []string{
			"backup window", "time window", "maximum run time", "maximum duration", "time limit",
			"computer was off", "computer was turned off", "was asleep", "sleep mode", "did not start",
			"not started on time", "missed & schedul",
		},
		category:   "schedule",
		confidence: "medium",
		cause:      "The run possibly fell outside its allowed window, or the machine was off or asleep at the scheduled time; check the schedule and power settings.",
		example:    "The job was stopped because the backup window ended.",
	},

	// Configuration
	{
		name: "nothing-selected",
		patterns: []string{
			"nothing to back up", "no items selected", "no data to back up", "selection is empty",
			"no files selected", "no objects", "empty selection",
		},
		category:   "configuration",
		confidence: "medium",
		cause:      "The job's selection looks empty, possibly after a source was renamed or removed; check what the job is set to back up.",
		example:    "There is nothing to back up: the selection is empty.",
	},
	{
		name:       "transaction-log",
		patterns:   []string{"truncat & log"},
		category:   "configuration",
		confidence: "low",
		cause:      "Log truncation possibly failed because of the database's recovery model or state, or because another tool also backs up its logs; check the SQL settings.",
		example:    "Failed to truncate Microsoft SQL Server transaction logs.",
	},
	{
		name:       "retention",
		patterns:   []string{"retention", "purge & fail", "could not delete old", "failed to delete old"},
		category:   "configuration",
		confidence: "low",
		cause:      "The retention settings possibly could not be applied, so old backups may pile up; check the retention rules and whether the storage allows deletions.",
		example:    "Retention policy could not be applied to the backup chain.",
	},
	{
		name:       "changed-block-tracking",
		patterns:   []string{"changed block tracking", "change block tracking", "cbt"},
		category:   "configuration",
		confidence: "low",
		cause:      "Changed block tracking looks unavailable or reset, so the run may read whole disks; consider resetting CBT for the VM.",
		example:    "CBT data is invalid, failing over to legacy incremental backup.",
	},
	{
		name:       "unsupported",
		patterns:   []string{"not supported", "unsupported"},
		category:   "configuration",
		confidence: "low",
		cause:      "Something in the setup may not be supported by this product version, such as a file system, OS or option; check the product's requirements.",
		example:    "The file system on volume F: is not supported.",
	},

	// Unknown
	{
		name:       "cancelled",
		patterns:   []string{"cancelled by", "canceled by", "stopped by user", "stopped by the user", "aborted by user", "aborted by the user"},
		category:   "unknown",
		confidence: "low",
		cause:      "The run appears to have been stopped by a person or another process before it finished; check who cancelled it.",
		example:    "The job was cancelled by BWDENTAL\\admin.",
	},
	{
		name: "software-fault",
		patterns: []string{
			"unexpected error", "internal error", "unhandled exception", "terminated unexpectedly", "crashed",
			"access violation", "out of memory",
		},
		category:   "unknown",
		confidence: "low",
		cause:      "This may be a fault in the backup software itself or a lack of memory; check its logs, and consider updating to the latest version.",
		example:    "An unexpected error occurred.",
	},

	// Weak hints, last
	{
		name:       "timeout",
		patterns:   []string{"timed out", "timeout", "time-out", "time out"},
		category:   "network",
		confidence: "low",
		cause:      "An operation timed out, possibly on a slow or unstable network link or an overloaded target; check the connection and the target's load.",
		example:    "The operation timed out after 600 seconds.",
	},
	{
		name: "connect-failed",
		patterns: []string{
			"could not connect", "unable to connect", "failed to connect", "cannot connect", "can't connect",
			"connection failed", "connection error", "not connected",
		},
		category:   "network",
		confidence: "low",
		cause:      "The connection to the target possibly failed; check that it is on and reachable from the backup machine, and that no firewall is in the way.",
		example:    "Unable to connect to the server.",
	},
	{
		name:       "port",
		patterns:   []string{`port & re:\bports? \d{2,5}\b`},
		category:   "network",
		confidence: "low",
		cause:      "A network port may be blocked or its service not listening; check the firewall and the service on the target.",
		example:    "Request to 10.1.2.3 port 8443 failed.",
	},
	{
		name:       "skipped",
		patterns:   []string{"skipped", "not backed up", "could not be backed up", "were excluded"},
		category:   "source",
		confidence: "low",
		cause:      "Some items were possibly left out because they were unreadable, open or missing; the job log should name them.",
		example:    "12 items were skipped.",
	},
	{
		name:       "read-failed",
		patterns:   []string{"could not be read", "unable to read", "cannot read", "failed to read", "read error"},
		category:   "source",
		confidence: "low",
		cause:      "Some data could possibly not be read from the source; check that the files exist and are readable, and the disk's health.",
		example:    "Failed to read from the source volume.",
	},
	{
		name:       "permission",
		patterns:   []string{"permission", "privilege"},
		category:   "credentials",
		confidence: "low",
		cause:      "The job's account may lack a permission it needs; check its rights on the source and the destination.",
		example:    "The operation requires elevated privilege.",
	},
	{
		name:       "snapshot-general",
		patterns:   []string{"snapshot"},
		category:   "snapshot",
		confidence: "low",
		cause:      "Something possibly went wrong around the snapshot the backup reads from; check the snapshot or VSS messages in the product's log.",
		example:    "Snapshot warning.",
	},
}
