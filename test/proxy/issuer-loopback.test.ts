// Plain http is accepted for an OAuth issuer on this machine only: a host name that merely starts
// with "127." (127.0.0.1.nip.io, 127.evil.example) is a remote host, and its tokens would cross
// the network in clear text.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isLoopbackUrl } from "../../daemon/models/credentials.js";

test("loopback issuers: localhost, 127.0.0.0/8, ::1", () => {
  for (const url of ["http://localhost:4000", "http://127.0.0.1:4000/", "http://127.5.6.7", "http://[::1]:80/x"]) assert.ok(isLoopbackUrl(url), url);
});

test("a name starting with 127. is not loopback", () => {
  for (const url of ["http://127.0.0.1.nip.io/", "http://127.evil.example", "http://127.0.0.1.evil.example:4000", "http://evil.example", "not a url"])
    assert.not.ok(isLoopbackUrl(url), url);
});

test.run();
