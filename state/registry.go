package state

// registry lists every record type by its number (one line each): how to
// make an empty one to decode into, and whether applying it leaves the
// derived figures as they were.
var registry = [256]kind{
	TypeWorkspaceCreated:  {make: func() Record { return new(WorkspaceCreated) }},
	TypeWorkspaceUpdated:  {make: func() Record { return new(WorkspaceUpdated) }},
	TypeClientCreated:     {make: func() Record { return new(ClientCreated) }},
	TypeClientUpdated:     {make: func() Record { return new(ClientUpdated) }},
	TypeJobCreated:        {make: func() Record { return new(JobCreated) }},
	TypeJobUpdated:        {make: func() Record { return new(JobUpdated) }},
	TypeJobDeleted:        {make: func() Record { return new(JobDeleted) }},
	TypeKeyCreated:        {make: func() Record { return new(KeyCreated) }, keepsFigures: true},
	TypeKeyRevoked:        {make: func() Record { return new(KeyRevoked) }, keepsFigures: true},
	TypeKeyFirstUsed:      {make: func() Record { return new(KeyFirstUsed) }, keepsFigures: true},
	TypeReport:            {make: func() Record { return new(Report) }},
	TypeAlertChanged:      {make: func() Record { return new(AlertChanged) }},
	TypeClockSet:          {make: func() Record { return new(ClockSet) }},
	TypeRESTUsage:         {make: func() Record { return new(RESTUsage) }, keepsFigures: true},
	TypeRateLevels:        {make: func() Record { return new(RateLevels) }, keepsFigures: true},
	TypeImportPart:        {make: func() Record { return new(ImportPart) }},
	TypeMissed:            {make: func() Record { return new(Missed) }},
	TypeEscalated:         {make: func() Record { return new(Escalated) }},
	TypeDeliveryAttempted: {make: func() Record { return new(DeliveryAttempted) }, keepsFigures: true},
	TypeChannelCreated:    {make: func() Record { return new(ChannelCreated) }, keepsFigures: true},
	TypeChannelDeleted:    {make: func() Record { return new(ChannelDeleted) }, keepsFigures: true},
	TypeEscalationCreated: {make: func() Record { return new(EscalationCreated) }, keepsFigures: true},
	TypeEscalationDeleted: {make: func() Record { return new(EscalationDeleted) }, keepsFigures: true},
	TypeTrialEnded:        {make: func() Record { return new(TrialEnded) }, keepsFigures: true},
	TypeIngestRotated:     {make: func() Record { return new(IngestRotated) }, keepsFigures: true},
	TypeMailUnparsed:      {make: func() Record { return new(MailUnparsed) }, keepsFigures: true},
	TypeUnparsedGone:      {make: func() Record { return new(UnparsedGone) }, keepsFigures: true},
	TypeUserCreated:       {make: func() Record { return new(UserCreated) }, keepsFigures: true},
	TypeUserUpdated:       {make: func() Record { return new(UserUpdated) }, keepsFigures: true},
	TypeUserDeleted:       {make: func() Record { return new(UserDeleted) }, keepsFigures: true},
	TypeSessionStarted:    {make: func() Record { return new(SessionStarted) }, keepsFigures: true},
	TypeSessionSeen:       {make: func() Record { return new(SessionSeen) }, keepsFigures: true},
	TypeSessionEnded:      {make: func() Record { return new(SessionEnded) }, keepsFigures: true},

	// PSA, Teams and PagerDuty channels (rec_psa.go).
	TypeTicketChannelCreated: {make: func() Record { return new(TicketChannelCreated) }, keepsFigures: true},
	TypeClientMapped:         {make: func() Record { return new(ClientMapped) }, keepsFigures: true},
	TypeTicketLinked:         {make: func() Record { return new(TicketLinked) }, keepsFigures: true},
}
