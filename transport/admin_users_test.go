package transport_test

import (
	"testing"

	"backupmon/internal/testserver"
	"backupmon/password"
)

// TestAdminUserChecksBeforeHashing: a user request that will be refused
// (unknown workspace or user, a bad field, a taken e-mail address) is
// answered without spending an argon2id hash on its password; one that is
// accepted spends exactly one.
func TestAdminUserChecksBeforeHashing(t *testing.T) {
	h := password.NewHasher(password.Params{Time: 1, Memory: 64, Threads: 1}, 1, 4)
	s := testserver.Start(t, testserver.Options{Hasher: h})
	f := s.Fixture(testserver.FixtureOptions{})
	const pw = "a long enough password"
	created := s.MustAdmin(201, "POST", "/workspaces/"+f.WS+"/users", map[string]any{"email": "ann@example.test", "name": "Ann", "role": "owner", "password": pw}).Data()
	uid := created["id"].(string)
	const unknown = "01a1ab97-4908-7000-8000-000000000000"
	for _, tc := range []struct {
		what, method, path string
		body               map[string]any
		status             int
		code, message      string
	}{
		{"create in an unknown workspace", "POST", "/workspaces/" + unknown + "/users",
			map[string]any{"email": "bob@example.test", "name": "Bob", "role": "member", "password": pw}, 404, "NOT_FOUND", "Workspace not found"},
		{"update an unknown user", "PATCH", "/workspaces/" + f.WS + "/users/" + unknown,
			map[string]any{"password": pw}, 404, "NOT_FOUND", "User not found"},
		{"update in an unknown workspace", "PATCH", "/workspaces/" + unknown + "/users/" + uid,
			map[string]any{"password": pw}, 404, "NOT_FOUND", "Workspace not found"},
		{"create with a taken e-mail address", "POST", "/workspaces/" + f.WS + "/users",
			map[string]any{"email": "ANN@example.test", "name": "Ann again", "role": "member", "password": pw}, 409, "CONFLICT", "A user with this email already exists"},
		{"create with a bad role", "POST", "/workspaces/" + f.WS + "/users",
			map[string]any{"email": "cy@example.test", "name": "Cy", "role": "boss", "password": pw}, 400, "INVALID_REQUEST", ""},
		{"update with a bad e-mail address", "PATCH", "/workspaces/" + f.WS + "/users/" + uid,
			map[string]any{"email": "not an address", "password": pw}, 400, "INVALID_REQUEST", ""},
	} {
		t.Run(tc.what, func(t *testing.T) {
			before := h.Runs()
			r := s.Admin(tc.method, tc.path, tc.body)
			admWantError(t, tc.what, r, tc.status, tc.code, "")
			if tc.message != "" {
				if got := r.JSON["error"].(map[string]any)["message"]; got != tc.message {
					t.Errorf("message %q, want %q", got, tc.message)
				}
			}
			if n := h.Runs() - before; n != 0 {
				t.Errorf("%d password hashes spent on a refused request", n)
			}
		})
	}
	before := h.Runs()
	s.MustAdmin(200, "PATCH", "/workspaces/"+f.WS+"/users/"+uid, map[string]any{"password": pw + " changed"})
	if n := h.Runs() - before; n != 1 {
		t.Errorf("a new password spent %d hashes, want 1", n)
	}
}
