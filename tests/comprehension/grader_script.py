"""A grader command for the tests (script protocol: the request JSON on stdin, the reply on
stdout). ``argv[1]`` picks how it misbehaves; it grades from the prompt knowmeter rendered."""

import json
import re
import sys

req = json.load(sys.stdin)
prompt = req["prompt"]
mode = sys.argv[1]
fenced = re.search(r"<<<BEGIN AGENT_ANSWER (\w+)>>>\n(.*?)\n<<<END AGENT_ANSWER \1>>>", prompt, re.DOTALL)
assert fenced is not None, "the grading prompt carries the agent's answer fenced"
answer = fenced.group(2)
ids = re.findall(r'<behavior id="([^"]*)" kind="(positive|negative)">', prompt)
reasked = "YOUR PREVIOUS REPLY WAS REJECTED" in prompt
quote = " ".join(answer.split()[:6]) or "-"
verdicts = [{"id": i, "kind": k, "verdict": "PASS", "evidence_quote": quote, "rationale": "present"} for i, k in ids]
if mode == "bad-quote" or (mode == "fix-on-reask" and not reasked):
    verdicts[0]["evidence_quote"] = "words the agent never wrote"
elif mode == "skip":
    verdicts = verdicts[1:]
elif mode == "hedge-fail":
    verdicts[0].update(verdict="FAIL", rationale="this might be missing")
elif mode == "hedge-pass":
    verdicts[0].update(rationale="perhaps present")
reply = {
    "case_id": 1,
    "dimension": "C1",
    "behavior_verdicts": verdicts,
    "dimension_verdict": "PASS",
    "verbatim_overlap_check": {"passed": True, "overlap_ngrams": []},
}
text = "I think it is fine." if mode == "not-json" else "<verdict>" + json.dumps(reply) + "</verdict>"
print(json.dumps({"output": text, "costUSD": 0.05 if mode == "costly" else 0.0}))
