"""Rebuild ``superni/test_categories.tsv`` and ``superni/coverage.tsv`` from the splits, the task files and tasks.csv.

Both tables describe the superni mirror itself (README "Layout", "Coverage"). Inputs: the three pinned split files
(``splits/default/{train,test}_tasks.txt``, ``splits/xlingual/test_tasks.txt``), the 288 pinned ``tasks/<task>.json``
files, and the fork's ``tmp/tasks.csv`` (jiashenggu/Tk-Instruct@1bac1f2), read as in :mod:`.superni_partial`
(the 13 tasks that only ``tasks_partial/`` holds are counted from tasks.csv, so this recipe does not depend on the
other recipe's outputs).

Status of a split task (README "coverage.tsv"): ``full`` if ``tasks/`` holds it with its ``Instance License`` (all
fields kept, instances cut to the cap), ``truncated`` if ``tasks/`` holds it without one (a transcribed prefix of the
upstream file), ``partial`` if it is a tasks.csv task not in ``tasks/``, else ``missing``. Counts
(``n_instances_in_mirror``, ``n_pos_examples``, ``n_neg_examples``) are read from that file (empty example counts and
0 instances for a missing task).

``coverage.tsv``: one row per split task -- train_tasks.txt, then default test_tasks.txt, then xlingual
test_tasks.txt, each in file order (split ``train``, ``test_default``, ``test_xlingual``). Columns that record facts
about upstream files which the mirror does not hold are constants here, as the mirror's build recorded them (they
come from the whole upstream files in allenai/natural-instructions -- the 117 truncated ones alone are ~120 M
characters -- as the search index reported them, e.g. its ``total_chars``): ``n_instances_total_upstream`` of
each ``full`` task (:data:`UPSTREAM_INSTANCES`), and
``upstream_file_chars`` and ``source_commit`` of each ``truncated`` one (:data:`UPSTREAM_CHARS_AT`, keyed by the first
two ``_``-parts of the task name, which are unique across the splits; a short commit maps through :data:`COMMITS`),
plus the free-text ``transcription_note`` (:data:`TRANSCRIPTION_NOTES`). ``pages_read`` follows the README rule:
non-English tasks 1 page; English tasks 1 page if page 1 (the first 16,000 characters) already held 40 complete
instances, else 2 -- counted on the mirror file's own text, which is a re-serialisation of the same prefix
(``"Instances"`` is the last field, so the text up to the last kept instance has the same layout as upstream).

``test_categories.tsv``: the 119 English test tasks in tasks.csv order (its cut names mapped to the split names),
then the 35 xlingual test tasks in split order. Category: from the task file's ``Categories[0]`` for the 23 full
test tasks (``category_source`` "task file"), from tasks.csv otherwise for English, and inferred from the task name
for non-English (:data:`XLINGUAL_CATEGORY_RULES`: copa -> CEC, entailment/farstail -> TE, persianqa -> AC,
clickbait -> TG). Abbreviation and paper metric per category (:data:`CATEGORIES`). Both tables: plain TSV, ``\\n``
line ends, nothing quoted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from wobble.data.recipes.superni_partial import named_rows, task_object

TASKS_CSV = "tmp/tasks.csv"
SPLITS = (("train", "splits/default/train_tasks.txt"), ("test_default", "splits/default/test_tasks.txt"),
          ("test_xlingual", "splits/xlingual/test_tasks.txt"))
PAGE_CHARS = 16000
ONE_PAGE_MIN_INSTANCES = 40

CATEGORIES: dict[str, tuple[str, str]] = {
    "Textual Entailment": ("TE", "EM"), "Cause Effect Classification": ("CEC", "EM"),
    "Coreference Resolution": ("CR", "EM"), "Dialogue Act Recognition": ("DAR", "EM"),
    "Answerability Classification": ("AC", "EM"), "Word Analogy": ("WA", "EM"),
    "Overlap Extraction": ("OE", "ROUGE-L"), "Keyword Tagging": ("KT", "ROUGE-L"),
    "Question Rewriting": ("QR", "ROUGE-L"), "Title Generation": ("TG", "ROUGE-L"),
    "Data to Text": ("DT", "ROUGE-L"), "Grammar Error Correction": ("GEC", "ROUGE-L"),
}
XLINGUAL_CATEGORY_RULES = (("copa", "Cause Effect Classification"), ("entailment", "Textual Entailment"),
                           ("farstail", "Textual Entailment"), ("persianqa", "Answerability Classification"),
                           ("clickbait", "Title Generation"))
DATA_IN_MIRROR = {
    "full": "tasks/ (full fields, first 100 instances)",
    "truncated": "tasks/ (truncated: all fields except Instance License, first complete instances from the first "
                 "1-2 16k-char pages of the upstream file)",
    "partial": "tasks_partial/ (definition+examples+first instances, first gold only)",
    "missing": "none",
}
CATEGORY_SOURCE = {"csv": "Tk-Instruct fork tasks.csv", "file": "task file",
                   "name": "inferred from task name (12 test categories)"}
COVERAGE_COLUMNS = ("task", "split", "status", "n_instances_total_upstream", "n_instances_in_mirror", "n_pos_examples",
                    "n_neg_examples", "upstream_file_chars", "source_commit", "pages_read", "transcription_note")
CATEGORY_COLUMNS = ("task", "split_file", "language", "category", "abbrev", "metric", "category_source",
                    "data_in_mirror", "n_instances_in_mirror")

COMMITS = {c[:7]: c for c in (
    "ae457ac40dafe0cd3dcd1370f0a29da54f33df4a", "e0fd31052b21acea5bd95fb00253e1ee1f5d8259",
    "d764527c35c435a44e15f1a0daf3e24945bce491", "f3f5de72ab7d889815008c1b91f510a61efac67f",
    "b3cccee738d5f206afb2125b100b8a96a77ab254")}

#: ``full`` task -> number of Instances in the whole upstream file.
UPSTREAM_INSTANCES = """
task926_coached=496 task1453_person=261 task610_conllpp=3720 task023_cosmosqa=6500 task1447_drug=2718
task344_hybridqa=6496 task820_protoqa=5000 task300_storycloze=6500 task918_coqa=495 task1600_smcalflow=1029
task964_librispeech=150 task347_hybridqa=6495 task924_event2mind=6499 task1289_trec=5376 task1713_convai3=182
task179_participant=423 task1657_gooaq=104 task1483_chemical=284 task413_mickey=6482 task674_google=2302
task388_torque=2267 task1596_event2mind=6499 task1146_country=231 task105_story=6500 task471_haspart=3095
task1451_drug=222 task278_stereoset=737 task835_mathdataset=3985 task059_ropes=521 task1581_eqasc-perturbed=820
task1364_hans=2998 task1319_country=101 task1572_samsum=200 task868_mawps=958 task1448_disease=151 task455_swag=6500
task1499_dstc3=2259 task596_mocha=4950 task1567_propara=200 task124_conala=4999 task151_tomqa=6500
task1480_gene=1200 task294_storycommonsense=6500 task1482_gene=278 task672_amazon=159 task1318_country=163
task1147_country=232 task1314_country=237 task861_prost=97 task382_hybridqa=6496 task1660_super=1893
task1603_smcalflow=2779 task1326_qa=5529 task862_asdiv=378 task1340_msr=4934 task934_turk=2356 task1412_web=3772
task589_amazonfood=6499 task081_piqa=6498 task1594_yahoo=2163 task227_clariq=6500 task1339_peixian=1773
task843_financial=1805 task1485_organ=140 task770_pawsx=251 task060_ropes=1613 task1585_root09=563 task132_dais=4997
task859_prost=94 task821_protoqa=5000 task906_dialogre=277 task582_naturalquestion=6500 task1509_evalution=551
task568_circa=6205 task861_asdiv=846 task1508_wordnet=3377 task1582_bless=159 task068_abductivenli=6500
task866_mawps=597 task867_mawps=780 task591_sciq=6500 task1704_ljspeech=499 task1293_kilt=6241 task1355_sent=999
task1425_country=247 task461_qasper=2613 task082_babi=992 task454_swag=6500 task094_conala=5000 task927_yelp=493
task489_mwsc=100 task853_hippocorpus=104 task067_abductivenli=6499 task1580_eqasc-perturbed=822 task874_opus=111
task955_wiki=1761 task739_lhoestq=117 task071_abductivenli=6500 task292_storycommonsense=6499 task967_ruletaker=296
task745_ai2=378 task1320_country=252 task1327_qa=6061 task592_sciq=6499 task1398_obqa=945 task381_boolq=1405
task857_inquisitive=161 task1601_webquestions=3776 task639_multi=178 task922_event2mind=435 task886_quail=500
task900_freebase=6498 task299_storycloze=6497 task863_asdiv=275 task1426_country=190 task1325_qa=5132
task080_piqa=6500 task293_storycommonsense=6500 task565_circa=2943 task1665_trainglecopa=100 task095_conala=4975
task096_conala=4918 task917_coqa=117 task1566_propara=200 task1518_limit=996 task143_odd-man-out=6500
task389_torque=2267 task181_outcome=423 task618_amazonreview=6500 task1504_hatexplain=4103 task093_conala=5000
task897_freebase=3889 task275_enhanced=1178 task919_coqa=118 task1452_location=175 task1481_gene=1062
task627_xlwic=156 task122_conala=5000 task1317_country=273 task898_freebase=6500 task1519_qa=343 task1609_xquad=240
task111_asset=2000 task615_moviesqa=6500 task072_abductivenli=6500 task899_freebase=6495 task1479_organization=200
task933_wiki=1763 task670_ambigqa=4749 task1393_superglue=496 task1344_glue=2480 task645_summarization=2000
task619_ohsumed=1259 task648_answer=281 task620_ohsumed=1261 task891_gap=197 task1195_disflqa=6494
task033_winogrande=6500 task769_qed=1000 task743_eurlex=650 task121_zest=127 task1345_glue=6500 task1342_amazon=6217
task957_e2e=2161 task1358_xlsum=6127 task393_plausible=100 task613_politifact=6500 task219_rocstories=6500
task1540_parsed=3000 task1562_zest=142 task1622_disfl=1995
"""

#: ``truncated`` task -> characters of the whole upstream file @ the commit it was read at.
UPSTREAM_CHARS_AT = """
task893_gap=63226@e0fd310 task641_esnli=58788@e0fd310 task1529_scitail1.1=1883601@ae457ac
task202_mnli=3136747@ae457ac task288_gigaword=756370@ae457ac task1387_anli=697214@e0fd310
task1664_winobias=104138@ae457ac task880_schema=305526@ae457ac task738_perspectrum=2012795@ae457ac
task1439_doqa=3033421@ae457ac task1728_web=3816195@d764527 task1640_aqa1.0=2584961@ae457ac
task242_tweetqa=2412571@e0fd310 task1159_bard=142411@e0fd310 task890_gcwd=59647@e0fd310 task039_qasc=2192907@ae457ac
task1154_bard=167239@ae457ac task1612_sick=515622@ae457ac task1442_doqa=2242582@ae457ac
task936_defeasible=2342631@ae457ac task1386_anli=590070@ae457ac task1152_bard=42140@ae457ac
task290_tellmewhy=1539550@e0fd310 task304_numeric=4072003@f3f5de7 task760_msr=134182@ae457ac
task035_winogrande=2740224@e0fd310 task391_causal=556364@ae457ac task602_wikitext-103=158950@e0fd310
task1409_dart=3627613@ae457ac task1407_dart=1784728@ae457ac task201_mnli=3138556@ae457ac
task520_aquamuse=794675@ae457ac task892_gap=120296@e0fd310 task828_copa=234606@e0fd310 task1155_bard=110609@e0fd310
task1385_anli=592985@e0fd310 task1531_daily=120986@e0fd310 task1516_imppres=238380@e0fd310
task1394_meta=121297@ae457ac task401_numeric=2513126@e0fd310 task1598_nyc=2456432@ae457ac
task1615_sick=533798@ae457ac task970_sherliic=622335@e0fd310 task1390_wscfixed=220878@e0fd310
task199_mnli=2358278@e0fd310 task034_winogrande=2746415@ae457ac task133_winowhy=1217709@e0fd310
task226_english=564860@ae457ac task935_defeasible=2011379@e0fd310 task1157_bard=208922@ae457ac
task937_defeasible=1906727@e0fd310 task1388_cb=166838@e0fd310 task671_ambigqa=1406961@e0fd310
task330_gap=2465382@ae457ac task329_gap=2929878@ae457ac task281_points=966146@ae457ac task036_qasc=479460@ae457ac
task1554_scitail=2482422@ae457ac task050_multirc=1781266@e0fd310 task362_spolin=2868343@ae457ac
task1557_jfleg=272018@ae457ac task249_enhanced=219342@ae457ac task614_glucose=3582197@ae457ac
task677_ollie=1717855@ae457ac task220_rocstories=3204688@ae457ac task1631_openpi=912114@ae457ac
task1391_winogrande=1875508@e0fd310 task1156_bard=137401@e0fd310 task1624_disfl=1777712@ae457ac
task1158_bard=76830@e0fd310 task827_copa=263513@ae457ac task1153_bard=404221@e0fd310 task879_schema=517386@ae457ac
task190_snli=1918094@e0fd310 task200_mnli=2160358@e0fd310 task1534_daily=4145826@b3cccee task442_com=616636@e0fd310
task392_inverse=628562@e0fd310 task640_esnli=32560@e0fd310 task623_ohsumed=563409@ae457ac
task020_mctaco=124679@ae457ac task642_esnli=86956@ae457ac task102_commongen=2032852@e0fd310
task1561_clickbait=793644@ae457ac task969_xcopa=137956@ae457ac task463_parsinlu=1017899@e0fd310
task1627_copa=295201@e0fd310 task1177_xcopa=152456@ae457ac task1182_xcopa=156327@e0fd310 task942_copa=108264@e0fd310
task1628_copa=411585@e0fd310 task941_copa=85754@e0fd310 task1184_xcopa=122649@ae457ac task1170_xcopa=165648@ae457ac
task1171_xcopa=145800@e0fd310 task939_copa=86033@ae457ac task1185_xcopa=116428@ae457ac task1179_xcopa=129888@ae457ac
task1174_xcopa=161773@ae457ac task1175_xcopa=143598@e0fd310 task943_copa=85744@e0fd310 task1168_xcopa=157797@e0fd310
task1181_xcopa=136784@e0fd310 task1180_xcopa=152452@ae457ac task968_xcopa=154530@ae457ac
task1172_xcopa=166289@ae457ac task938_copa=108435@ae457ac task1173_xcopa=146601@ae457ac task1629_copa=258787@e0fd310
task1626_copa=331451@e0fd310 task1176_xcopa=175931@e0fd310 task1183_xcopa=139687@e0fd310
task464_parsinlu=1005876@e0fd310 task940_copa=108962@e0fd310 task1169_xcopa=140562@ae457ac
task534_farstail=2589197@e0fd310 task1178_xcopa=142269@e0fd310
"""

#: ``truncated`` task -> where the transcribed file is not a faithful prefix of upstream (README exceptions).
TRANSCRIPTION_NOTES = {
    'task1728_web_nlg_data_to_text':
        "upstream doubled comma (',,') after two example outputs repaired to ','; no instance ids upstream",
    'task890_gcwd_classification':
        '2 invisible C1 chars (U+0080 U+0099, mojibake as upstream) restored to match the page length',
    'task1386_anli_r2_entailment':
        '1 invisible char restored as U+200E (position guessed) to match the page length',
    'task304_numeric_fused_head_resolution':
        'only an old-format upstream version in the index (commit f3f5de7): '
        'Definition str normalized to a 1-element list; no instance ids',
    'task1407_dart_question_generation':
        '2 U+FEFF chars restored in one output (mirroring its input) to match the page length',
    'task1534_daily_dialog_question_classification':
        "only an old-format upstream version in the index (commit b3cccee): Categories 'Classification', "
        "Definition str normalized to list, no instance ids; Definition differs from tasks_partial",
    'task463_parsinlu_entailment_classification':
        '31 zero-width non-joiners (U+200C) missing from the Persian text (transcription could not reproduce them)',
    'task942_copa_mr_commonsense_reasoning':
        '2 characters (presumably invisible, likely ZWJ U+200D) missing from the transcribed page, position unknown',
    'task1185_xcopa_commonsense_cause_effect_zh':
        '2 characters (presumably invisible) missing from the transcribed page, position unknown',
    'task464_parsinlu_entailment_sentence_generation':
        '24 zero-width non-joiners (U+200C) missing from the Persian text (transcription could not reproduce them)',
    'task534_farstail_entailment':
        '57 zero-width non-joiners (U+200C) missing from the Persian text (transcription could not reproduce them)',
}


def task_key(task: str) -> str:
    """The constants' key for a task: its first two ``_``-parts (``task861_asdiv``)."""
    return "_".join(task.split("_")[:2])


def parse_table(text: str) -> dict[str, str]:
    """``key=value`` words -> {key: value}; a repeated key raises."""
    out: dict[str, str] = {}
    for word in text.split():
        key, value = word.split("=", 1)
        if key in out:
            raise ValueError(f"constant table repeats {key}")
        out[key] = value
    return out


def instance_ends(text: str) -> list[int]:
    """Character offsets just past each Instance object of a task file written with indent=4."""
    start = text.index('"Instances": [')
    return [start + m.end() for m in re.finditer(r"\n        \}", text[start:])]


def pages_read(split: str, text: str) -> int:
    if split == "test_xlingual":
        return 1
    on_page_one = sum(1 for end in instance_ends(text) if end <= PAGE_CHARS)
    return 1 if on_page_one >= ONE_PAGE_MIN_INSTANCES else 2


def xlingual_category(task: str) -> str:
    for word, category in XLINGUAL_CATEGORY_RULES:
        if word in task:
            return category
    raise ValueError(f"no category rule matches the xlingual task {task}")


def tsv(columns: tuple[str, ...], rows: list[dict[str, object]]) -> bytes:
    lines = ["\t".join(columns)]
    for row in rows:
        fields = ["" if row.get(c) is None else str(row[c]) for c in columns]
        if any(ch in f for f in fields for ch in "\t\n\r"):
            raise ValueError(f"{row['task']}: a field holds a tab or newline")
        lines.append("\t".join(fields))
    return ("\n".join(lines) + "\n").encode("utf-8")


def survey(inputs: Mapping[str, Path]) -> tuple[dict[str, list[str]], dict[str, dict], list[tuple[str, dict]]]:
    """(split -> tasks, task -> what the mirror holds of it, tasks.csv (name, row) pairs)."""
    splits = {split: Path(inputs[rel]).read_text(encoding="utf-8").split() for split, rel in SPLITS}
    csv_rows = named_rows(Path(inputs[TASKS_CSV]).read_bytes(), Path(inputs[SPLITS[1][1]]).read_bytes())
    csv_tasks = {task: row for task, row in csv_rows}
    held: dict[str, dict] = {}
    for tasks in splits.values():
        for task in tasks:
            rel = f"tasks/{task}.json"
            if rel in inputs:
                text = Path(inputs[rel]).read_text(encoding="utf-8")
                obj = json.loads(text)
                status = "full" if "Instance License" in obj else "truncated"
            elif task in csv_tasks:
                text, obj, status = None, task_object(csv_tasks[task]), "partial"
            else:
                held[task] = {"status": "missing", "n": 0}
                continue
            held[task] = {"status": status, "text": text, "obj": obj, "n": len(obj["Instances"]),
                          "pos": len(obj["Positive Examples"]), "neg": len(obj["Negative Examples"])}
    return splits, held, csv_rows


def coverage_rows(splits: dict[str, list[str]], held: dict[str, dict]) -> list[dict[str, object]]:
    upstream_n = parse_table(UPSTREAM_INSTANCES)
    chars_at = parse_table(UPSTREAM_CHARS_AT)
    used: set[str] = set()
    rows = []
    for split, _ in SPLITS:
        for task in splits[split]:
            h = held[task]
            row: dict[str, object] = {"task": task, "split": split, "status": h["status"],
                                      "n_instances_in_mirror": h["n"], "n_pos_examples": h.get("pos"),
                                      "n_neg_examples": h.get("neg")}
            key = task_key(task)
            if h["status"] == "full":
                row["n_instances_total_upstream"] = upstream_n[key]
                used.add(key)
            elif h["status"] == "truncated":
                chars, short = chars_at[key].split("@")
                row.update(upstream_file_chars=chars, source_commit=COMMITS[short],
                           pages_read=pages_read(split, h["text"]), transcription_note=TRANSCRIPTION_NOTES.get(task))
                used.add(key)
            rows.append(row)
    unused = (set(upstream_n) | set(chars_at)) - used
    if unused:
        raise ValueError(f"constants name tasks that are not full/truncated in the mirror: {sorted(unused)[:3]}")
    return rows


def category_rows(splits: dict[str, list[str]], held: dict[str, dict],
                  csv_rows: list[tuple[str, dict]]) -> list[dict[str, object]]:
    if sorted(t for t, _ in csv_rows) != sorted(splits["test_default"]):
        raise ValueError("tasks.csv does not hold exactly the default test tasks")
    entries = []
    for task, row in csv_rows:
        if held[task]["status"] == "full":
            entries.append((task, "default", "English", held[task]["obj"]["Categories"][0], "file"))
        else:
            entries.append((task, "default", "English", row["Categories"], "csv"))
    for task in splits["test_xlingual"]:
        entries.append((task, "xlingual", "non-English", xlingual_category(task), "name"))
    rows = []
    for task, split_file, language, category, source in entries:
        abbrev, metric = CATEGORIES[category]
        status = held[task]["status"]
        rows.append({"task": task, "split_file": split_file, "language": language, "category": category,
                     "abbrev": abbrev, "metric": metric, "category_source": CATEGORY_SOURCE[source],
                     "data_in_mirror": DATA_IN_MIRROR[status], "n_instances_in_mirror": held[task]["n"]})
    return rows


def build(inputs: Mapping[str, Path]) -> dict[str, bytes]:
    splits, held, csv_rows = survey(inputs)
    return {"coverage.tsv": tsv(COVERAGE_COLUMNS, coverage_rows(splits, held)),
            "test_categories.tsv": tsv(CATEGORY_COLUMNS, category_rows(splits, held, csv_rows))}
