import RE2 from "re2";
import { performance } from "perf_hooks";
import { estimateRegexpCost } from "../src/events/regexp-budget";
const L = Number(process.env.L || 4096);
const rnd = (n: number, alphabet: string) => { let s = ""; for (let i = 0; i < n; i++) s += alphabet[Math.floor(Math.random() * alphabet.length)]; return s; };
const alphabets = ["a", "ab", "abcdefghijklmnopqrstuvwxyz0123456789 .,-_", "aé€😀", "01", "xy"];
const pats: string[] = [];
for (const n of [50,100,125,150,200,250]) pats.push(`.{${n}}z`, `(.*a){${Math.round(n/5)}}z`);
for (const n of [100,200,400]) pats.push(`[^z]{${n}}z`, `\\w{${n}}Z`);
for (const [a,b] of [[10,5],[20,5],[25,5],[40,3],[20,10]]) pats.push(`(.{0,${a}}){0,${b}}z`, `(.{1,${a}}){1,${b}}z`);
for (const k of [12,16,30,60,100,120,200,250]) pats.push(`[ab]*a[ab]{${k}}c`, `.*a.{${k}}c`, `.*1[01]{${k}}2`, `(a|b)*a(a|b){${k}}c`);
for (const n of [10,30,60,100]) pats.push(`(a|aa|aaa){${n}}b`, `(x+x+)+y`);
const rows: Array<[number, number, string]> = [];
for (const p of pats) {
  const c = estimateRegexpCost(p); if (!c.ok) continue;
  const re = new RE2(p); let worst = 0;
  for (let round = 0; round < 40; round++) for (const a of alphabets) { const inp = rnd(a.length > 3 ? L / 2 : L, a); const s = performance.now(); re.test(inp); worst = Math.max(worst, performance.now() - s); }
  rows.push([c.size, worst, p]);
}
rows.sort((x, y) => x[0] - y[0]);
for (const [c, w, p] of rows) console.log(String(c).padStart(6), w.toFixed(3).padStart(9), p);
