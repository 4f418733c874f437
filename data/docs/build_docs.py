"""Build the bundled illustrated document set (data/docs/) for mKG-RAG.

Run from the repository root:  .venv/bin/python data/docs/build_docs.py

Writes, deterministically, from the tables below:

* corpus/<slug>.md (and one .html): short encyclopedic articles, one ``#`` title,
  ``##`` sections, images referenced by relative path (``![alt](images/…)``);
* corpus/images/: copies of the demo KG's images (data/demo/images: photographs shipped
  by scikit-image and national flags drawn with Pillow by data/demo/build_demo.py; see
  data/demo/README.md for what each shows and its licence). The same files are the demo
  KG's entity images, so the CPU image stand-in can recognise a query photo of them;
* queries/: the query images of the image questions (copies of data/demo/queries);
* questions.jsonl: questions in the ``kgqa eval`` format plus ``support``: the supporting
  document (slug) and section heading, for document recall and evidence recall.

Only facts the author is sure of are written. Several are facts the demo KG lacks
(dates, sizes, names of flags, missions), so only the documents can answer them.
The query images of image questions are copies of the demo's perturbed ones (data/demo/queries),
in queries/ (an image path may not leave the question file's folder).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEMO = HERE.parent / "demo"

# slug -> (title, format, [(section heading, text, image file or None, alt text)])
DOCS: dict[str, tuple[str, str, list[tuple[str, str, str | None, str]]]] = {
    "eileen_collins": ("Eileen Collins", "md", [
        ("Overview", "Eileen Collins is an American astronaut and retired United States Air Force colonel. "
         "She was born on 19 November 1956 in Elmira, New York.", "eileen_collins.jpg",
         "Portrait of the astronaut Eileen Collins"),
        ("Space Shuttle missions", "Collins was the first woman to pilot a Space Shuttle, on mission STS-63 in "
         "February 1995. In July 1999 she became the first woman to command a Space Shuttle mission, STS-93 "
         "aboard Columbia, which deployed the Chandra X-ray Observatory. She later commanded STS-114 aboard "
         "Discovery in 2005.", None, ""),
        ("Retirement", "Collins retired from NASA in 2006.", None, ""),
    ]),
    "falcon_9": ("Falcon 9", "md", [
        ("Overview", "Falcon 9 is a two-stage rocket designed and manufactured by SpaceX. Its first stage is "
         "powered by nine Merlin engines, which gave the rocket the number in its name.",
         "falcon9_dscovr_launch.jpg", "A Falcon 9 rocket lifting off"),
        ("History", "Falcon 9 first flew on 4 June 2010. In December 2015 a Falcon 9 first stage landed "
         "back on the ground after an orbital launch for the first time.", None, ""),
        ("Notable launches", "On 11 February 2015 a Falcon 9 launched the Deep Space Climate Observatory "
         "(DSCOVR) from Cape Canaveral.", None, ""),
    ]),
    "dscovr": ("Deep Space Climate Observatory", "md", [
        ("Overview", "The Deep Space Climate Observatory (DSCOVR) is a space weather and Earth observation "
         "satellite operated by the National Oceanic and Atmospheric Administration (NOAA). It was launched "
         "on a Falcon 9 rocket in February 2015.", None, ""),
        ("Orbit and instruments", "DSCOVR watches the solar wind from the Sun-Earth Lagrange point L1. Its "
         "Earth Polychromatic Imaging Camera (EPIC) photographs the whole sunlit side of the Earth.", None, ""),
        ("Origins", "The mission was first proposed by Al Gore under the name Triana.", None, ""),
    ]),
    "hubble_xdf": ("Hubble eXtreme Deep Field", "md", [
        ("Overview", "The Hubble eXtreme Deep Field (XDF) is an image of a small region of sky in the "
         "constellation Fornax, assembled from about ten years of Hubble Space Telescope observations.",
         "hubble_xdf.jpg", "The Hubble eXtreme Deep Field, thousands of distant galaxies"),
        ("Release and content", "The XDF was released in September 2012. It shows about 5,500 galaxies, "
         "some of them seen as they were more than 13 billion years ago.", None, ""),
    ]),
    "hubble_space_telescope": ("Hubble Space Telescope", "md", [
        ("Launch", "The Hubble Space Telescope was launched on 24 April 1990 by the Space Shuttle Discovery "
         "on mission STS-31.", None, ""),
        ("Design", "Hubble has a primary mirror 2.4 metres in diameter. It is named after the astronomer "
         "Edwin Hubble.", None, ""),
        ("Servicing", "Astronauts visited Hubble on five Space Shuttle servicing missions between 1993 and "
         "2009 to repair it and to install new instruments.", None, ""),
    ]),
    "edwin_hubble": ("Edwin Hubble", "md", [
        ("Life", "Edwin Hubble was an American astronomer, born on 20 November 1889 in Marshfield, Missouri. "
         "He died in 1953 in San Marino, California.", None, ""),
        ("Work", "Hubble showed that many nebulae are galaxies far beyond the Milky Way, and found that "
         "galaxies recede from us at speeds proportional to their distance, a relation known as Hubble's "
         "law.", None, ""),
    ]),
    "moon": ("Moon", "md", [
        ("Overview", "The Moon is the only natural satellite of the Earth. Its average distance from the "
         "Earth is about 384,400 kilometres.", "moon_surface.jpg", "The cratered surface of the Moon"),
        ("Exploration", "The first crewed landing on the Moon was Apollo 11 on 20 July 1969. Neil Armstrong "
         "was the first person to walk on its surface, followed by Buzz Aldrin, while Michael Collins "
         "stayed in lunar orbit.", None, ""),
    ]),
    "house_cat": ("Cat", "md", [
        ("Overview", "The cat, or house cat, is a small carnivorous mammal. Its scientific name is Felis "
         "catus, and it is the only domesticated species in the family Felidae.", "chelsea_the_cat.jpg",
         "Chelsea the cat, a tabby house cat"),
        ("The photograph", "The photograph shows Chelsea the cat. It is one of the sample images "
         "distributed with the scikit-image library.", None, ""),
    ]),
    "coffee": ("Coffee", "md", [
        ("Overview", "Coffee is a drink brewed from roasted coffee beans, the seeds of plants of the genus "
         "Coffea.", "coffee_cup.jpg", "A cup of coffee on a saucer"),
        ("Production", "The two most widely grown species are Coffea arabica and Coffea canephora, known "
         "as robusta. Brazil is the largest coffee producer in the world.", None, ""),
    ]),
    "flag_of_france": ("Flag of France", "md", [
        ("Design", "The national flag of France is a tricolour of three vertical bands of blue, white and "
         "red, known as the Tricolore. Its proportions are 2:3.", "flag_france.png", "The French tricolour"),
        ("Country", "France is a country in Western Europe whose capital is Paris.", None, ""),
    ]),
    "flag_of_italy": ("Flag of Italy", "md", [
        ("Design", "The flag of Italy is a tricolour of three vertical bands of green, white and red, "
         "known in Italian as il Tricolore.", "flag_italy.png", "The Italian tricolour"),
        ("Country", "Italy is a country in Southern Europe whose capital is Rome.", None, ""),
    ]),
    "flag_of_japan": ("Flag of Japan", "md", [
        ("Design", "The flag of Japan is a white rectangle with a red disc in its centre. The disc's "
         "diameter is three fifths of the flag's height.", "flag_japan.png", "The flag of Japan"),
        ("Names and status", "Officially the flag is called Nisshoki, the sun-mark flag, but it is commonly "
         "known as Hinomaru, the circle of the sun. It became the official national flag by a law passed "
         "in 1999.", None, ""),
    ]),
    "flag_of_denmark": ("Flag of Denmark", "md", [
        ("Design", "The flag of Denmark is red with a white Nordic cross that extends to the edges, the "
         "upright of the cross shifted towards the hoist. It is called the Dannebrog.", "flag_denmark.png",
         "The Danish flag"),
        ("History", "The Dannebrog is regarded as the oldest national flag in continuous use. A legend says "
         "it fell from the sky during the Battle of Lyndanisse in 1219.", None, ""),
    ]),
    "flag_of_switzerland": ("Flag of Switzerland", "md", [
        ("Design", "The flag of Switzerland is square: a white cross on a red field. With the flag of "
         "Vatican City it is one of only two square national flags.", "flag_switzerland.png",
         "The square Swiss flag"),
        ("Country", "Switzerland is a country in Central Europe whose federal city is Bern.", None, ""),
    ]),
    "flag_of_indonesia": ("Flag of Indonesia", "md", [
        ("Design", "The flag of Indonesia has two horizontal bands, red above white, in proportions 2:3. "
         "In Indonesian it is called Sang Saka Merah-Putih.", "flag_indonesia.png", "The Indonesian flag"),
        ("Similar flags", "The flag of Monaco has the same two bands of red above white but is 4:5, and "
         "the flag of Poland is white above red.", None, ""),
    ]),
    "flag_of_finland": ("Flag of Finland", "md", [
        ("Design", "The flag of Finland is white with a blue Nordic cross. In Finnish it is called "
         "Siniristilippu, the blue cross flag.", "flag_finland.png", "The Finnish flag"),
        ("Country", "Finland is a country in Northern Europe whose capital is Helsinki.", None, ""),
    ]),
    "eiffel_tower": ("Eiffel Tower", "md", [
        ("Overview", "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris. It was "
         "completed in 1889 as the entrance to the Exposition Universelle, the world's fair of that year.",
         None, ""),
        ("Design and size", "The tower was built by the company of the engineer Gustave Eiffel; the "
         "engineers Maurice Koechlin and Emile Nouguier designed it and the architect Stephen Sauvestre "
         "refined its appearance. It is about 330 metres tall.", None, ""),
    ]),
    "statue_of_liberty": ("Statue of Liberty", "md", [
        ("Overview", "The Statue of Liberty stands on Liberty Island in New York Harbor. It was a gift from "
         "the people of France and was dedicated on 28 October 1886.", None, ""),
        ("Design", "The sculptor Frederic Auguste Bartholdi designed the statue, and Gustave Eiffel designed "
         "its internal iron framework.", None, ""),
    ]),
    "sydney_opera_house": ("Sydney Opera House", "html", [
        ("Overview", "The Sydney Opera House is a performing arts centre on Sydney Harbour in Australia. "
         "It was designed by the Danish architect Jorn Utzon.", None, ""),
        ("Opening", "Queen Elizabeth II opened the Sydney Opera House in October 1973. It became a UNESCO "
         "World Heritage Site in 2007.", None, ""),
    ]),
    "space_shuttle_columbia": ("Space Shuttle Columbia", "md", [
        ("Service", "Columbia was the first Space Shuttle orbiter to reach space, on mission STS-1 on 12 "
         "April 1981. In 1999 it carried the Chandra X-ray Observatory into orbit on STS-93.", None, ""),
        ("Loss", "Columbia broke apart during re-entry on 1 February 2003, at the end of mission STS-107; "
         "all seven astronauts on board died.", None, ""),
    ]),
}

# id | image (demo query, or "") | question | answer | aliases (;) | support doc | support section | topic QID
QUESTIONS = """
d01|eileen_collins.jpg|Which Space Shuttle mission did the astronaut in this photo command in 1999?|STS-93||eileen_collins|Space Shuttle missions|Q241050
d02|eileen_collins.jpg|In which year did the astronaut shown here retire from NASA?|2006||eileen_collins|Retirement|Q241050
d03|falcon9_dscovr_launch.jpg|In which year did the rocket shown in this photo first fly?|2010||falcon_9|History|Q219913
d04|falcon9_dscovr_launch.jpg|How many engines power the first stage of the rocket in this photo?|nine|9;nine Merlin engines|falcon_9|Overview|Q219913
d05|falcon9_dscovr_launch.jpg|Which observatory did the rocket shown here launch in February 2015?|Deep Space Climate Observatory|DSCOVR|falcon_9|Notable launches|Q219913
d06||What is the name of the camera on DSCOVR that photographs the sunlit side of the Earth?|Earth Polychromatic Imaging Camera|EPIC|dscovr|Orbit and instruments|Q1152125
d07|hubble_xdf.jpg|In which constellation is the region of sky shown in this image?|Fornax||hubble_xdf|Overview|Q1124700
d08|hubble_xdf.jpg|About how many galaxies does the image shown here contain?|5,500|5500;about 5,500|hubble_xdf|Release and content|Q1124700
d09||On which Space Shuttle mission was the Hubble Space Telescope launched?|STS-31||hubble_space_telescope|Launch|Q2513
d10||How large is the primary mirror of the Hubble Space Telescope?|2.4 metres|2.4 m;2.4 meters|hubble_space_telescope|Design|Q2513
d11||Where was Edwin Hubble born?|Marshfield|Marshfield, Missouri|edwin_hubble|Life|Q11303111
d12|moon_surface.jpg|Who was the first person to walk on the body shown in this photo?|Neil Armstrong|Armstrong|moon|Exploration|Q405
d13|moon_surface.jpg|What is the average distance from the Earth to the object shown here?|384,400 kilometres|384,400 km;384400 km;about 384,400 kilometres|moon|Overview|Q405
d14|chelsea_the_cat.jpg|What is the scientific name of the animal in this photo?|Felis catus||house_cat|Overview|Q146
d15|coffee_cup.jpg|Which country is the largest producer of the drink shown in this photo?|Brazil||coffee|Production|Q8486
d16|flag_japan.jpg|What is the flag shown here commonly called?|Hinomaru||flag_of_japan|Names and status|Q17
d17|flag_japan.jpg|In which year was the flag shown here made official by law?|1999||flag_of_japan|Names and status|Q17
d18|flag_denmark.jpg|What is the name of the flag shown in this image?|Dannebrog||flag_of_denmark|Design|Q35
d19|flag_switzerland.jpg|What shape is the flag shown here?|square||flag_of_switzerland|Design|Q39
d20|flag_france.jpg|What is the capital of the country whose flag is shown?|Paris||flag_of_france|Country|Q142
d21|flag_indonesia.jpg|What are the proportions of the flag shown here?|2:3||flag_of_indonesia|Design|Q252
d22||Who designed the Sydney Opera House?|Jorn Utzon|Jørn Utzon;Utzon|sydney_opera_house|Overview|Q45178
d23||In which year did the Sydney Opera House open?|1973||sydney_opera_house|Opening|Q45178
d24||How tall is the Eiffel Tower?|330 metres|330 m;about 330 metres;330 meters|eiffel_tower|Design and size|Q243
d25||Who designed the internal iron framework of the Statue of Liberty?|Gustave Eiffel|Eiffel|statue_of_liberty|Design|Q9202
d26||On what date was Space Shuttle Columbia lost?|1 February 2003|February 1, 2003;2003|space_shuttle_columbia|Loss|Q48958
d27|flag_finland.jpg|What is the flag shown here called in Finnish?|Siniristilippu||flag_of_finland|Design|Q33
d28|flag_italy.jpg|What is the capital of the country whose flag is shown?|Rome|Roma|flag_of_italy|Country|Q38
""".strip()


def markdown(title: str, sections) -> str:
    out = [f"# {title}", ""]
    for heading, text, image, alt in sections:
        out += [f"## {heading}", ""]
        if image:
            out += [f"![{alt}](images/{image})", ""]
        out += [text, ""]
    return "\n".join(out)


def html(title: str, sections) -> str:
    from html import escape

    out = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\">", f"<title>{escape(title)}</title>",
           "</head><body>", f"<h1>{escape(title)}</h1>"]
    for heading, text, image, alt in sections:
        out.append(f"<h2>{escape(heading)}</h2>")
        if image:
            out.append(f"<img src=\"images/{escape(image)}\" alt=\"{escape(alt)}\">")
        out.append(f"<p>{escape(text)}</p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def main() -> int:
    corpus = HERE / "corpus"
    imgdir = corpus / "images"
    if corpus.exists():
        shutil.rmtree(corpus)
    imgdir.mkdir(parents=True)
    headings: dict[str, set[str]] = {}
    for slug, (title, fmt, sections) in DOCS.items():
        headings[slug] = {h for h, *_ in sections}
        for _, _, image, _ in sections:
            if image:
                shutil.copyfile(DEMO / "images" / image, imgdir / image)
        text = markdown(title, sections) if fmt == "md" else html(title, sections)
        (corpus / f"{slug}.{fmt}").write_text(text, encoding="utf-8")
    queries = HERE / "queries"
    if queries.exists():
        shutil.rmtree(queries)
    queries.mkdir()
    lines = []
    ids = set()
    for row in QUESTIONS.splitlines():
        qid, image, question, answer, aliases, doc, section, topic = row.split("|")
        if qid in ids:
            sys.exit(f"duplicate question id {qid}")
        ids.add(qid)
        if doc not in DOCS or section not in headings[doc]:
            sys.exit(f"{qid}: support {doc}/{section} is not a document section")
        q = {"id": qid}
        if image:
            if not (DEMO / "queries" / image).is_file():
                sys.exit(f"{qid}: no query image {image}")
            shutil.copyfile(DEMO / "queries" / image, queries / image)
            q["image"] = f"queries/{image}"
        q.update({"question": question, "answer": answer})
        if aliases:
            q["aliases"] = aliases.split(";")
        q["hops"] = 1
        q["topic"] = {"id": topic}
        q["support"] = {"document": doc, "section": section}
        lines.append(json.dumps(q, ensure_ascii=False))
    (HERE / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(DOCS)} documents, {len(lines)} questions → {HERE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
