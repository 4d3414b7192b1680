package engine

// Every way the engine's state changes, in one list. A command is a method
// of Engine (in the cmd_*.go file of its area) that sends its workspace's
// actor a closure: the closure decides the record from the state and the
// input (or refuses with an error), the state machine applies it
// (state.Workspace.Apply), and the log makes it durable before the answer.
// Time-driven work (timers.go) and a few reads log records too; they are
// listed after the commands. TestCommandsListed keeps this list whole: every
// exported method of cmd_*.go is here, and every record type is logged by
// something here.

// change is one entry: who changes the state, and the records it may log.
type changeEntry struct {
	by      string   // Engine.Method, or what runs it
	records []string // state record types
}

var changes = []changeEntry{
	// Workspaces, clients, jobs and keys (cmd_workspaces.go).
	{"Engine.CreateWorkspace", []string{"WorkspaceCreated"}},
	{"Engine.UpdateWorkspace", []string{"WorkspaceUpdated"}},
	{"Engine.CreateClient", []string{"ClientCreated"}},
	{"Engine.UpdateClient", []string{"ClientUpdated"}},
	{"Engine.CreateJob", []string{"JobCreated"}},
	{"Engine.UpdateJob", []string{"JobUpdated"}},
	{"Engine.DeleteJob", []string{"JobDeleted"}},
	{"Engine.DeleteJobBy", []string{"JobDeleted", "JobDeletedBy"}},
	// The same, made by a person in the dashboard (cmd_setup.go, byActor).
	{"dashboard: Engine.CreateClient, UpdateClient and CreateJob made by a person", []string{"ClientCreatedBy", "ClientUpdatedBy", "JobCreatedBy"}},
	{"Engine.CreateKey", []string{"KeyCreated"}},
	{"Engine.RevokeKey", []string{"KeyRevoked"}},
	// A job's size-drop threshold (cmd_setup.go).
	{"Engine.SetSizeDrop", []string{"SizeDropSet"}},
	// Reports (cmd_report.go).
	{"Engine.Report", []string{"Report"}},
	{"Engine.ImportReport", []string{"Report"}},
	{"Engine.ImportReports", []string{"Report"}},
	// Alerts and pauses (cmd_alerts.go).
	{"Engine.ChangeAlert", []string{"AlertChanged"}},
	{"Engine.TriageAlerts", []string{"AlertChanged"}},
	{"Engine.PauseJob", []string{"JobUpdated"}},
	{"Engine.ResumeJob", []string{"JobUpdated"}},
	// Report e-mails (cmd_mail.go).
	{"Engine.MailRecipient", nil}, // checks a recipient only
	{"Engine.Mail", []string{"Report", "MailUnparsed", "AIQueued"}},
	{"Engine.Reparsed", []string{"Report", "UnparsedGone", "AIQueued"}},
	{"Engine.DropUnparsed", []string{"UnparsedGone"}},
	{"Engine.RotateIngestAddress", []string{"IngestRotated"}},
	{"Engine.IngestDomain", nil}, // a setting
	// Parsing rules (cmd_rules.go).
	{"Engine.SaveParseRule", []string{"RuleSavedBy"}},
	{"Engine.DeleteParseRule", []string{"RuleDeleted"}},
	{"Engine.OrderParseRules", []string{"RulesOrderedBy"}},
	{"logs of earlier builds: rule changes without their activity", []string{"RuleSaved", "RulesOrdered"}},
	{"Engine.ParseRules", nil},
	{"Engine.GetParseRule", nil},
	{"Engine.UnparsedRefs", nil},
	// Suggestions from a model (cmd_ai.go).
	{"Engine.SetAI", []string{"AIAnswered"}},
	{"Engine.AIDone", []string{"AIAnswered"}},
	{"Engine.AIPrompt", nil},
	{"Engine.SetAIPrompt", []string{"AIPromptSet"}},
	// Notifications (cmd_notify.go).
	{"Engine.CreateChannel", []string{"ChannelCreated", "TicketChannelCreated"}},
	{"Engine.DeleteChannel", []string{"ChannelDeleted"}},
	{"Engine.CreateEscalation", []string{"EscalationCreated"}},
	{"Engine.DeleteEscalation", []string{"EscalationDeleted"}},
	{"Engine.DeliveryDone", []string{"DeliveryAttempted"}},
	// PSA, Teams and PagerDuty channels (cmd_psa.go, ticket.go).
	{"Engine.ClientMaps", nil}, // reads a PSA channel's client mappings
	{"Engine.MapClient", []string{"ClientMapped"}},
	{"Engine.UnmapClient", []string{"ClientMapped"}},
	{"Engine.DeliveryOutcome", []string{"TicketLinked", "DeliveryAttempted"}},
	{"Engine.ChannelTestNotice", nil}, // reads a channel for its test
	// People (cmd_people.go).
	{"Engine.CheckUser", nil}, // checks a user change before its password is hashed
	{"Engine.CreateUser", []string{"UserCreated"}},
	{"Engine.UpdateUser", []string{"UserUpdated"}},
	{"Engine.DeleteUser", []string{"UserDeleted"}},
	{"Engine.LoginFor", nil}, // reads a login's hash
	{"Engine.StartSession", []string{"SessionStarted"}},
	{"Engine.Session", []string{"SessionSeen", "SessionEnded"}},
	{"Engine.EndSession", []string{"SessionEnded"}},
	{"Engine.Logins", nil}, // reads the logins of an e-mail address
	// Invitations (cmd_invites.go).
	{"Engine.CreateInvite", []string{"InviteCreated"}},
	{"Engine.Invites", nil}, // lists them
	{"Engine.Invite", nil},  // reads one link's invitation
	{"Engine.RevokeInvite", []string{"InviteEnded"}},
	{"Engine.AcceptInvite", []string{"InviteEnded"}},
	// Two-factor sign-in (cmd_twofactor.go).
	{"Engine.StartSessionTwoFactor", []string{"TwoFactorUsed", "SessionStarted"}},
	{"Engine.EnableTwoFactor", []string{"TwoFactorSet"}},
	{"Engine.DisableTwoFactor", []string{"TwoFactorSet"}},
	{"Engine.RenewRecovery", []string{"TwoFactorSet"}},
	{"Engine.RequireTwoFactor", []string{"TwoFactorRequired"}},
	// The development clock (cmd_clock.go).
	{"Engine.SetClock", []string{"ClockSet"}},
	// A cluster's shard moving to another node (handover.go).
	{"Engine.HandOver", []string{"RateLevels"}},
	// A whole workspace moved in from another data directory (import.go).
	{"Engine.ImportWorkspace", []string{"ImportPart"}},

	// Time-driven work, run by the actor before and after each message
	// (timers.go, outbox.go).
	{"timer: a job's due time plus grace passes", []string{"Missed"}},
	{"timer: an alert's escalation instant comes", []string{"Escalated"}},
	{"timer: a delivery's attempt is due or times out", []string{"DeliveryAttempted"}},
	{"timer: a trial ends", []string{"TrialEnded"}},
	{"timer: a model question is due", []string{"AIAnswered"}},
	// Reads that note something (read_rest.go).
	{"Engine.REST: a counted request on a plan with a quota", []string{"RESTUsage"}},
	{"Engine.REST: a REST key's first use", []string{"KeyFirstUsed"}},
}
