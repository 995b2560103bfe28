// Verifies Web Bot Auth signatures (draft-ietf-webbotauth-httpsig-protocol-01,
// RFC 9421) with http-message-sig, an implementation independent of
// robotsgate: the proxy tests (proxy/signing_node_test.go) hand it the
// requests an origin received through robotsgate, and the key directory
// robotsgate served.
//
// stdin: a JSON array of cases, each
//   {"kind": "request", "label": "sig1", "jwk": {...}, "method": "GET",
//    "targetUri": "https://host/path", "fields": [{"name": ..., "value": ...}]}
// or
//   {"kind": "directory", "jwk": {...}, "label": "binding", "status": 200,
//    "fields": [...], "body": "...", "request": {"method", "targetUri", "fields"}}
// stdout: a JSON array of results, in order: {"ok": true, "keyid": ...,
// "agent": ...} or {"ok": false, "error": "..."}.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { component, verifySignature, webcrypto } from "http-message-sig";

const cases = JSON.parse(readFileSync(0, "utf8"));

async function verifyCase(c) {
  const key = await crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x: c.jwk.x },
    { name: "Ed25519" }, true, ["verify"]);
  const thumb = createHash("sha256")
    .update(`{"crv":"Ed25519","kty":"OKP","x":"${c.jwk.x}"}`).digest("base64url");
  const request = (r) => ({ kind: "request", method: r.method, targetUri: r.targetUri, fields: r.fields });
  let message, policy;
  if (c.kind === "directory") {
    const digest = createHash("sha256").update(c.body, "utf8").digest("base64");
    const sent = c.fields.find((f) => f.name.toLowerCase() === "content-digest");
    if (!sent || sent.value !== `sha-256=:${digest}:`) {
      throw new Error(`Content-Digest ${sent && sent.value} is not the body's sha-256 ${digest}`);
    }
    message = { kind: "response", status: c.status, fields: c.fields, request: request(c.request) };
    policy = {
      algorithms: ["ed25519"],
      requiredComponents: [component("@authority", { req: true }), "content-digest"],
      requiredParameters: ["created", "expires", "keyid", "tag"],
      validate: (s) => s.parameters.tag === "http-message-signatures-directory" && s.parameters.keyid === thumb,
    };
  } else {
    message = request(c);
    policy = {
      algorithms: ["ed25519"],
      requiredComponents: ["@authority", component("signature-agent", { key: c.label })],
      requiredParameters: ["created", "expires", "keyid", "tag"],
      maxAge: 86400,
      validate: (s) => s.parameters.tag === "web-bot-auth" && s.parameters.keyid === thumb &&
        s.parameters.expires - s.parameters.created <= 86400,
    };
  }
  const res = await verifySignature(message, {
    label: c.label,
    policy,
    resolveVerifier: () => webcrypto.verifier(key),
  });
  return { ok: true, keyid: res.parameters.keyid, label: res.label };
}

const out = [];
for (const c of cases) {
  try {
    out.push(await verifyCase(c));
  } catch (e) {
    out.push({ ok: false, error: `${e.code || e.name}: ${e.message}` });
  }
}
process.stdout.write(JSON.stringify(out) + "\n");
