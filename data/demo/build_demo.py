"""Build the bundled demo multimodal KG (data/demo/) in Wikidata5M format.

Run from the repository root:  .venv/bin/python data/demo/build_demo.py

Everything in data/demo/ except README.md, questions.jsonl and this script is
generated here, deterministically:

* wikidata5m_entity.txt / _relation.txt / _transductive_{train,valid,test}.txt /
  _text.txt from the tables below (facts written by label, resolved to ids);
* images/: real photographs shipped by scikit-image (see README.md for what each
  one shows and its licence) and national flags drawn with Pillow to their
  official proportions and colours;
* queries/: perturbed copies of every entity image (crop, rotation, colour shift,
  blur, JPEG) used as query images, so that recognition is not a byte match.

Only facts the author is sure are true are listed. Where an entity's Wikidata
QID is not known for certain it is marked ``?`` in ENTITIES; README.md lists
those (the facts hold either way; only the id may differ from Wikidata's).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# --------------------------------------------------------------------------- relations
# PID | label | aliases (;-separated). Real Wikidata property ids and labels.
RELATIONS = """
P17|country|sovereign state;land;state
P36|capital|capital city;seat of government
P19|place of birth|birthplace;born in;birth place
P20|place of death|deathplace;died in;death place
P84|architect|architecture firm;designed by
P131|located in the administrative territorial entity|located in;in;city;region;state
P190|twinned administrative body|sister city;twin town;twin city;partner city
P27|country of citizenship|citizenship;nationality;citizen of
P69|educated at|alma mater;studied at;university;school
P106|occupation|profession;job;work
P31|instance of|is a;type;is an
P47|shares border with|borders;neighbour;adjacent to;bordered by
P30|continent|located on continent
P38|currency|money;legal tender
P37|official language|language
P1376|capital of|is capital of;seat of
P26|spouse|wife;husband;married to;partner
P22|father|dad;has father
P25|mother|mom;has mother
P40|child|son;daughter;children
P50|author|writer;written by
P170|creator|artist;made by;sculptor;painter
P276|location|place;held by;venue;housed in
P495|country of origin|origin;from country
P361|part of|member of;subset of
P150|contains administrative territorial entity|subdivisions;contains;administrative divisions
P35|head of state|president;monarch;king;queen
P6|head of government|prime minister;mayor;premier
P138|named after|eponym;named for
P176|manufacturer|made by;builder;produced by
P112|founded by|founder;co-founder
P108|employer|works for;employed by
P1029|crew member(s)|crew;astronaut;crew member
P397|parent astronomical body|orbits;parent body;primary
P59|constellation|in constellation
P88|commissioned by|patron;ordered by
P547|commemorates|memorial to;monument to
P241|military branch|branch;service branch
P137|operator|operated by
P375|space launch vehicle|launch vehicle;rocket
P279|subclass of|is a type of;kind of
P171|parent taxon|taxon parent;higher taxon
P159|headquarters location|headquarters;based in;HQ
P166|award received|award;prize;honours
P800|notable work|famous work;works;known for
""".strip()

# --------------------------------------------------------------------------- entities
# QID | label | aliases (;) | short description | ? when the QID is not known for certain
ENTITIES = """
Q46|Europe||continent of the northern hemisphere|
Q48|Asia||largest continent|
Q49|North America||continent of the northern and western hemispheres|
Q18|South America||continent of the southern and western hemispheres|
Q15|Africa||continent|
Q3960|Australia|Sahul;Australian continent|continent|?
Q142|France|French Republic;République française|country in Western Europe|
Q38|Italy|Italian Republic;Italia|country in Southern Europe|
Q183|Germany|Federal Republic of Germany;Deutschland|country in Central Europe|
Q145|United Kingdom|UK;United Kingdom of Great Britain and Northern Ireland;Britain;Great Britain|country in north-western Europe|
Q30|United States|USA;United States of America;US;U.S.;America|country in North America|
Q17|Japan|Nippon;Nihon|island country in East Asia|
Q29|Spain|Kingdom of Spain;España|country in south-western Europe|
Q27|Ireland|Republic of Ireland;Éire|country in north-western Europe|
Q31|Belgium|Kingdom of Belgium|country in Western Europe|
Q55|Netherlands|Holland;Nederland|country in north-western Europe|
Q40|Austria|Republic of Austria;Österreich|country in Central Europe|
Q39|Switzerland|Swiss Confederation;Schweiz;Suisse|country in Central Europe|
Q36|Poland|Republic of Poland;Polska|country in Central Europe|
Q218|Romania|România|country in Southeast Europe|
Q657|Chad|Republic of Chad;Tchad|landlocked country in Central Africa|
Q252|Indonesia|Republic of Indonesia|country in Southeast Asia and Oceania|
Q235|Monaco|Principality of Monaco|city-state on the French Riviera|
Q35|Denmark|Danmark|country in Northern Europe|
Q34|Sweden|Kingdom of Sweden;Sverige|country in Northern Europe|
Q20|Norway|Kingdom of Norway;Norge|country in Northern Europe|
Q33|Finland|Republic of Finland;Suomi|country in Northern Europe|
Q159|Russia|Russian Federation|country spanning Eastern Europe and Northern Asia|
Q148|People's Republic of China|China;PRC|country in East Asia|
Q408|Australia|Commonwealth of Australia|country in Oceania|
Q16|Canada||country in North America|
Q155|Brazil|Federative Republic of Brazil;Brasil|country in South America|
Q668|India|Republic of India;Bharat|country in South Asia|
Q79|Egypt|Arab Republic of Egypt|country in North Africa and West Asia|
Q258|South Africa|Republic of South Africa;RSA|country in southern Africa|
Q41|Greece|Hellenic Republic;Hellas|country in Southeast Europe|
Q45|Portugal|Portuguese Republic|country in south-western Europe|
Q28|Hungary|Magyarország|country in Central Europe|
Q213|Czech Republic|Czechia|country in Central Europe|
Q32|Luxembourg|Grand Duchy of Luxembourg|country in Western Europe|
Q230|Georgia|Sakartvelo|country in the Caucasus|
Q1428|Georgia|State of Georgia;GA|state of the United States of America|
Q90|Paris|City of Light|capital and largest city of France|
Q220|Rome|Roma;Eternal City|capital of Italy|
Q64|Berlin||capital of Germany|
Q84|London||capital of the United Kingdom|
Q61|Washington, D.C.|Washington;District of Columbia;DC|capital city of the United States|
Q1490|Tokyo|Tōkyō|capital of Japan|
Q2807|Madrid||capital of Spain|
Q1761|Dublin|Baile Átha Cliath|capital of Ireland|
Q239|Brussels|City of Brussels;Bruxelles;Brussel|capital of Belgium|
Q727|Amsterdam||capital of the Netherlands|
Q1741|Vienna|Wien|capital of Austria|
Q70|Bern|Berne|federal city of Switzerland|
Q270|Warsaw|Warszawa|capital of Poland|
Q19660|Bucharest|București|capital of Romania|?
Q3659|N'Djamena|Ndjamena;Fort-Lamy|capital of Chad|?
Q3630|Jakarta|Djakarta;Batavia|capital of Indonesia|?
Q1748|Copenhagen|København|capital of Denmark|
Q1754|Stockholm||capital of Sweden|
Q585|Oslo||capital of Norway|
Q1757|Helsinki|Helsingfors|capital of Finland|
Q649|Moscow|Moskva|capital of Russia|
Q956|Beijing|Peking|capital of the People's Republic of China|
Q3114|Canberra||capital of Australia|
Q1930|Ottawa||capital of Canada|
Q2844|Brasília|Brasilia|capital of Brazil|
Q987|New Delhi||capital of India|?
Q85|Cairo|Al-Qahira|capital of Egypt|
Q3926|Pretoria|Tshwane|executive capital of South Africa|?
Q1524|Athens|Athina|capital of Greece|
Q597|Lisbon|Lisboa|capital of Portugal|
Q1781|Budapest||capital of Hungary|
Q1085|Prague|Praha|capital of the Czech Republic|
Q1489|Mexico City|Ciudad de México;CDMX|capital of Mexico|
Q96|Mexico|United Mexican States;México|country in North America|
Q414|Argentina|Argentine Republic|country in South America|
Q1486|Buenos Aires|CABA|capital of Argentina|
Q363130|Daniel Burnham|Daniel Hudson Burnham;Burnham|American architect and urban designer (1846–1912)|?
Q1605987|Henderson|Henderson, New York|town in Jefferson County, New York|?
Q51047|Caprese Michelangelo|Caprese|comune in Tuscany, Italy|?
Q1130896|Osborne House|Osborne|former royal residence on the Isle of Wight, England|?
Q2537|natural satellite|moon;satellite|astronomical body that orbits a planet|?
Q1842|Luxembourg|Luxembourg City|capital of Luxembourg|?
Q994|Tbilisi|Tiflis|capital of Georgia (country)|?
Q23556|Atlanta||capital of the U.S. state of Georgia|?
Q60|New York City|NYC;New York;Big Apple|most populous city of the United States|
Q1384|New York|New York State;State of New York;NY|state of the United States of America|
Q24861|Albany|Albany, New York|capital of the state of New York|?
Q62|San Francisco|SF|city in California, United States|
Q65|Los Angeles|LA|city in California, United States|
Q99|California|State of California;CA|state of the United States of America|
Q1297|Chicago||city in Illinois, United States|
Q1204|Illinois|IL|state of the United States of America|?
Q1400|Pennsylvania|PA|state of the United States of America|?
Q1345|Philadelphia|Philly|city in Pennsylvania, United States|
Q1537|Wisconsin|WI|state of the United States of America|?
Q1581|Missouri|MO|state of the United States of America|?
Q816|Arizona|AZ|state of the United States of America|?
Q16556|Phoenix|Phoenix, Arizona|capital of Arizona|?
Q1397|Ohio|OH|state of the United States of America|?
Q43196|Cincinnati||city in Ohio, United States|?
Q100|Boston||capital of Massachusetts|
Q771|Massachusetts|Commonwealth of Massachusetts;MA|state of the United States of America|?
Q49111|Cambridge|Cambridge, Massachusetts|city in Massachusetts, United States|?
Q350|Cambridge|Cambridge, England|city in England|
Q172|Toronto||city in Ontario, Canada|
Q3130|Sydney||city in New South Wales, Australia|
Q8678|Rio de Janeiro|Rio|city in Brazil|
Q16572|Guangzhou|Canton|city in Guangdong, China|?
Q1492|Barcelona||city in Catalonia, Spain|
Q8692|Bilbao|Bilbo|city in the Basque Country, Spain|?
Q5705|Catalonia|Catalunya|autonomous community of Spain|
Q13917|Île-de-France|Ile-de-France;Paris Region|region of France|?
Q980|Bavaria|Bayern;Free State of Bavaria|state of Germany|
Q1726|Munich|München|capital of Bavaria, Germany|
Q1017|Aachen|Aix-la-Chapelle|city in North Rhine-Westphalia, Germany|?
Q2966|Heidelberg||city in Baden-Württemberg, Germany|?
Q1794|Frankfurt am Main|Frankfurt|city in Hesse, Germany|
Q3955|Weimar||city in Thuringia, Germany|?
Q2079|Leipzig||city in Saxony, Germany|?
Q1022|Stuttgart||city in Baden-Württemberg, Germany|
Q586|Bonn||city in North Rhine-Westphalia, Germany|?
Q365|Cologne|Köln|city in North Rhine-Westphalia, Germany|
Q3012|Ulm||city in Baden-Württemberg, Germany|?
Q7003|Dijon||city in Burgundy, France|?
Q37776|Besançon|Besancon|city in eastern France|?
Q23482|Marseille|Marseilles|city in southern France|?
Q456|Lyon|Lyons|city in France|
Q1282|Lazio|Latium|region of Italy|?
Q1273|Tuscany|Toscana|region of Italy|?
Q1210|Lombardy|Lombardia|region of Italy|?
Q2044|Florence|Firenze|capital of Tuscany, Italy|
Q490|Milan|Milano|capital of Lombardy, Italy|
Q1449|Genoa|Genova|city in Liguria, Italy|
Q13375|Pisa||city in Tuscany, Italy|?
Q13364|Ravenna||city in Emilia-Romagna, Italy|?
Q21|England||country within the United Kingdom|
Q22|Scotland||country within the United Kingdom|
Q189288|Stratford-upon-Avon|Stratford|market town in Warwickshire, England|?
Q736981|Ramsgate||seaside town in Kent, England|?
Q34713|Salzburg||city in Austria|?
Q2090|Augsburg||city in Bavaria, Germany|?
Q34600|Kyoto|Kyōto|city in Japan|?
Q35765|Osaka|Ōsaka|city in Japan|?
Q72|Zürich|Zurich|city in Switzerland|
Q71|Geneva|Genève|city in Switzerland|
Q68938|La Chaux-de-Fonds||city in the canton of Neuchâtel, Switzerland|?
Q2000|Roermond||city in Limburg, Netherlands|?
Q43631|Leiden|Leyden|city in South Holland, Netherlands|?
Q690|Delft||city in South Holland, Netherlands|?
Q36600|The Hague|Den Haag;'s-Gravenhage|seat of government of the Netherlands|?
Q8717|Málaga|Malaga|city in Andalusia, Spain|?
Q42941|Agra||city in Uttar Pradesh, India|?
Q11739|Lahore||city in Punjab, Pakistan|?
Q843|Pakistan|Islamic Republic of Pakistan|country in South Asia|
Q26793|Elmira|Elmira, New York|city in New York, United States|?
Q128069|Syracuse|Syracuse, New York|city in New York, United States|?
Q4026|Ajaccio||city in Corsica, France|?
Q16559|Dallas||city in Texas, United States|?
Q1439|Texas|TX|state of the United States of America|
Q830149|Paris|Paris, Texas|city in Texas, United States|?
Q243|Eiffel Tower|Tour Eiffel;La dame de fer|wrought-iron lattice tower in Paris, France|
Q9202|Statue of Liberty|Liberty Enlightening the World|colossal copper statue in New York Harbor|
Q10285|Colosseum|Flavian Amphitheatre;Coliseum|ancient amphitheatre in Rome, Italy|
Q48435|Sagrada Família|Basílica de la Sagrada Família;Sagrada Familia|basilica in Barcelona designed by Antoni Gaudí|
Q207870|Casa Milà|La Pedrera|building in Barcelona designed by Antoni Gaudí|?
Q208160|Park Güell|Parc Güell|public park in Barcelona designed by Antoni Gaudí|?
Q82425|Brandenburg Gate|Brandenburger Tor|18th-century neoclassical gate in Berlin|
Q45178|Sydney Opera House|Opera House|performing arts centre in Sydney, Australia|
Q19675|Louvre|Louvre Museum;Musée du Louvre|art museum in Paris, France|
Q1092|Louvre Pyramid|Pyramide du Louvre|glass and metal pyramid at the Louvre, Paris|?
Q2981|Notre-Dame de Paris|Notre-Dame Cathedral;Notre Dame|medieval Catholic cathedral in Paris|
Q188856|Panthéon|Pantheon (Paris)|mausoleum in the Latin Quarter of Paris|?
Q99309|Pantheon|Pantheon (Rome)|former Roman temple, now a church, in Rome|
Q191242|Palais Garnier|Opéra Garnier;Paris Opera House|opera house in Paris, France|?
Q64436|Arc de Triomphe|Arc de Triomphe de l'Étoile|triumphal arch in Paris, France|?
Q178065|Centre Pompidou|Pompidou Centre;Beaubourg|cultural centre in Paris, France|?
Q189427|Guggenheim Museum Bilbao|Guggenheim Bilbao;Guggenheim Museum|museum of modern art in Bilbao, Spain|?
Q201219|Solomon R. Guggenheim Museum|Guggenheim Museum;The Guggenheim|art museum in Manhattan, New York City|?
Q1053987|Walt Disney Concert Hall|Disney Hall|concert hall in Los Angeles, California|?
Q219819|Dancing House|Fred and Ginger;Tančící dům|building in Prague, Czech Republic|?
Q337044|Fallingwater|Kaufmann Residence|house in Pennsylvania designed by Frank Lloyd Wright|?
Q173882|St Paul's Cathedral|St. Paul's Cathedral|Anglican cathedral in the City of London|?
Q62408|Palace of Westminster|Houses of Parliament|meeting place of the UK Parliament in London|?
Q41225|Big Ben|Elizabeth Tower;Clock Tower|clock tower at the Palace of Westminster, London|
Q83125|Tower Bridge||bascule and suspension bridge in London|?
Q18700|The Shard|Shard London Bridge;London Bridge Tower|skyscraper in London|?
Q1371543|Lloyd's building|Lloyd's of London building|office building in the City of London|?
Q11268|Seagram Building|375 Park Avenue|skyscraper in Manhattan, New York City|?
Q159847|Neue Nationalgalerie|New National Gallery|museum of modern art in Berlin|?
Q819008|Barcelona Pavilion|German Pavilion|pavilion in Barcelona designed by Mies van der Rohe|?
Q237349|Villa Savoye||modernist villa in Poissy, France|?
Q193447|Unité d'habitation|Cité radieuse;Unite d'Habitation Marseille|modernist housing block in Marseille|?
Q159859|Poissy||commune in Yvelines, France|?
Q154862|Altes Museum|Old Museum|museum on Museum Island, Berlin|?
Q151341|Konzerthaus Berlin|Schauspielhaus Berlin|concert hall on the Gendarmenmarkt, Berlin|?
Q191390|Florence Cathedral|Duomo di Firenze;Santa Maria del Fiore|cathedral of Florence, Italy|?
Q12512|St. Peter's Basilica|Basilica di San Pietro;Saint Peter's Basilica|church in Vatican City|
Q237|Vatican City|Vatican;Holy See|city-state enclaved in Rome|
Q11299|Chrysler Building||Art Deco skyscraper in Manhattan, New York City|?
Q9188|Empire State Building|ESB|skyscraper in Manhattan, New York City|
Q220728|Flatiron Building|Fuller Building|triangular skyscraper in Manhattan, New York City|?
Q44440|Golden Gate Bridge||suspension bridge in San Francisco, California|
Q178114|Washington Monument||obelisk in Washington, D.C.|?
Q35525|White House|Executive Mansion|official residence of the president of the United States|
Q213559|Lincoln Memorial||memorial to Abraham Lincoln in Washington, D.C.|?
Q9141|Taj Mahal||mausoleum in Agra, India|
Q39054|Leaning Tower of Pisa|Torre di Pisa;Tower of Pisa|freestanding bell tower in Pisa, Italy|
Q4176|Cologne Cathedral|Kölner Dom|Catholic cathedral in Cologne, Germany|
Q79961|Christ the Redeemer|Cristo Redentor|Art Deco statue of Jesus in Rio de Janeiro|?
Q10288|Parthenon||former temple on the Athenian Acropolis, Greece|?
Q190065|Rijksmuseum||Dutch national museum in Amsterdam|?
Q188740|Museum of Modern Art|MoMA|art museum in Manhattan, New York City|?
Q460248|Museo Reina Sofía|Reina Sofia|Spain's national museum of 20th-century art, Madrid|?
Q221092|Mauritshuis||art museum in The Hague, Netherlands|?
Q51252|Uffizi|Uffizi Gallery;Galleria degli Uffizi|art museum in Florence, Italy|?
Q1427451|Santa Maria delle Grazie|Santa Maria delle Grazie (Milan)|church and Dominican convent in Milan|?
Q2012|Galleria dell'Accademia|Accademia Gallery|art museum in Florence, Italy|?
Q134883|CN Tower||communications and observation tower in Toronto|?
Q20882|Gustave Eiffel|Alexandre Gustave Eiffel;Eiffel|French civil engineer (1832–1923)|
Q3498289|Stephen Sauvestre|Charles Léon Stephen Sauvestre;Sauvestre|French architect (1847–1919)|?
Q215120|Frédéric Auguste Bartholdi|Auguste Bartholdi;Bartholdi|French sculptor (1834–1904)|?
Q131041|Colmar||commune in Alsace, France|?
Q25328|Antoni Gaudí|Gaudí;Antoni Gaudi|Catalan architect (1852–1926)|
Q188810|Jørn Utzon|Jorn Utzon;Utzon|Danish architect (1918–2008)|?
Q46868|I. M. Pei|Ieoh Ming Pei;Pei|Chinese-American architect (1917–2019)|
Q180374|Frank Gehry|Frank Owen Gehry;Gehry|Canadian-American architect|
Q5604|Frank Lloyd Wright|Wright|American architect (1867–1959)|
Q7390468|Richland Center|Richland Center, Wisconsin|city in Wisconsin, United States|?
Q170373|Christopher Wren|Sir Christopher Wren;Wren|English architect (1632–1723)|
Q165637|Charles Barry|Sir Charles Barry|English architect (1795–1860)|?
Q313609|Augustus Pugin|Augustus Welby Northmore Pugin;A. W. N. Pugin;Pugin|English architect (1812–1852)|?
Q1634307|Horace Jones|Sir Horace Jones|English architect (1819–1887)|?
Q190257|Renzo Piano|Piano|Italian architect|?
Q332461|Richard Rogers|Richard George Rogers;Lord Rogers|British-Italian architect (1933–2021)|?
Q41508|Ludwig Mies van der Rohe|Mies van der Rohe;Mies|German-American architect (1886–1969)|?
Q4109|Le Corbusier|Charles-Édouard Jeanneret|Swiss-French architect (1887–1965)|
Q3237839|Roquebrune-Cap-Martin||commune in Alpes-Maritimes, France|?
Q151075|Karl Friedrich Schinkel|Schinkel|Prussian architect (1781–1841)|?
Q17316|Neuruppin||town in Brandenburg, Germany|?
Q64978|Carl Gotthard Langhans|Langhans|Prussian architect (1732–1808)|?
Q311088|Charles Garnier|Jean-Louis Charles Garnier|French architect (1825–1898)|?
Q1401|Filippo Brunelleschi|Brunelleschi|Italian architect (1377–1446)|?
Q5592|Michelangelo|Michelangelo Buonarroti|Italian sculptor, painter and architect (1475–1564)|
Q762|Leonardo da Vinci|Leonardo|Italian polymath of the Renaissance (1452–1519)|
Q13376|Vinci||comune in Tuscany, Italy|?
Q207400|Amboise||commune in Indre-et-Loire, France|?
Q12418|Mona Lisa|La Gioconda;La Joconde|portrait painting by Leonardo da Vinci|
Q128910|The Last Supper|Il Cenacolo;L'Ultima Cena|mural painting by Leonardo da Vinci in Milan|?
Q179900|David|David of Michelangelo|marble statue by Michelangelo|?
Q5582|Vincent van Gogh|Van Gogh;Vincent Willem van Gogh|Dutch post-impressionist painter (1853–1890)|
Q45585|The Starry Night|De sterrennacht|painting by Vincent van Gogh (1889)|?
Q9841|Zundert||municipality in North Brabant, Netherlands|?
Q210868|Auvers-sur-Oise||commune in Val-d'Oise, France|?
Q5593|Pablo Picasso|Picasso|Spanish painter and sculptor (1881–1973)|
Q175036|Guernica||painting by Pablo Picasso (1937)|?
Q221003|Mougins||commune in Alpes-Maritimes, France|?
Q5598|Rembrandt|Rembrandt van Rijn|Dutch painter (1606–1669)|
Q219831|The Night Watch|Nachtwacht;Militia Company of District II|painting by Rembrandt (1642)|?
Q41264|Johannes Vermeer|Vermeer;Jan Vermeer|Dutch painter (1632–1675)|?
Q185372|Girl with a Pearl Earring|Meisje met de parel|painting by Johannes Vermeer|?
Q5669|Sandro Botticelli|Botticelli|Italian painter (c. 1445–1510)|?
Q151047|The Birth of Venus|Nascita di Venere|painting by Sandro Botticelli|?
Q535|Victor Hugo|Victor Marie Hugo;Hugo|French writer (1802–1885)|
Q180736|Les Misérables|Les Miserables|novel by Victor Hugo (1862)|?
Q191380|The Hunchback of Notre-Dame|Notre-Dame de Paris (novel)|novel by Victor Hugo (1831)|?
Q692|William Shakespeare|Shakespeare;The Bard|English playwright and poet (1564–1616)|
Q41567|Hamlet|The Tragedy of Hamlet, Prince of Denmark|tragedy by William Shakespeare|?
Q5879|Johann Wolfgang von Goethe|Goethe|German writer (1749–1832)|
Q131657|Faust|Faust. Eine Tragödie|play by Johann Wolfgang von Goethe|?
Q1067|Dante Alighieri|Dante|Italian poet (c. 1265–1321)|
Q1405|Divine Comedy|Divina Commedia;La Divina Commedia|narrative poem by Dante Alighieri|?
Q5682|Miguel de Cervantes|Cervantes|Spanish writer (1547–1616)|
Q480|Don Quixote|Don Quijote;El ingenioso hidalgo don Quijote de la Mancha|novel by Miguel de Cervantes|?
Q190670|Alcalá de Henares|Alcala de Henares|city in the Community of Madrid, Spain|?
Q42|Douglas Adams|Douglas Noël Adams|English writer and humourist (1952–2001)|
Q3107329|The Hitchhiker's Guide to the Galaxy|Hitchhiker's Guide|comedy science fiction series by Douglas Adams|?
Q159288|Santa Barbara|Santa Barbara, California|city in California, United States|?
Q937|Albert Einstein|Einstein|German-born theoretical physicist (1879–1955)|
Q138518|Princeton|Princeton, New Jersey|municipality in New Jersey, United States|?
Q1408|New Jersey|NJ|state of the United States of America|?
Q11942|ETH Zurich|Swiss Federal Institute of Technology in Zurich;ETH|public research university in Zürich|?
Q7186|Marie Curie|Maria Skłodowska-Curie;Marie Skłodowska Curie;Madame Curie|Polish-French physicist and chemist (1867–1934)|
Q37463|Pierre Curie|Curie|French physicist (1859–1906)|
Q7504|Irène Joliot-Curie|Irène Curie|French chemist (1897–1956)|?
Q8958|Frédéric Joliot-Curie|Jean Frédéric Joliot-Curie|French physicist (1900–1958)|?
Q209842|University of Paris|Sorbonne;La Sorbonne|university in Paris (1896–1970)|?
Q38104|Nobel Prize in Physics|Physics Nobel|annual award in physics|
Q44585|Nobel Prize in Chemistry|Chemistry Nobel|annual award in chemistry|
Q935|Isaac Newton|Newton;Sir Isaac Newton|English mathematician and physicist (1642–1727)|
Q307|Galileo Galilei|Galileo|Italian astronomer and physicist (1564–1642)|
Q254|Wolfgang Amadeus Mozart|Mozart;W. A. Mozart|Austrian composer (1756–1791)|
Q170348|Leopold Mozart|Johann Georg Leopold Mozart|German composer and violinist (1719–1787)|?
Q255|Ludwig van Beethoven|Beethoven|German composer (1770–1827)|
Q1339|Johann Sebastian Bach|J. S. Bach;Bach|German composer (1685–1750)|
Q7070|Eisenach||town in Thuringia, Germany|?
Q1268|Frédéric Chopin|Chopin;Fryderyk Chopin|Polish composer and pianist (1810–1849)|
Q9439|Queen Victoria|Victoria;Alexandrina Victoria|Queen of the United Kingdom (1837–1901)|
Q152245|Albert, Prince Consort|Prince Albert;Albert of Saxe-Coburg and Gotha|husband of Queen Victoria (1819–1861)|?
Q9682|Elizabeth II|Queen Elizabeth II;Elizabeth Alexandra Mary|Queen of the United Kingdom (1952–2022)|
Q80976|Prince Philip, Duke of Edinburgh|Prince Philip;Philip Mountbatten|husband of Elizabeth II (1921–2021)|
Q43274|Charles III|King Charles III;Prince Charles;Charles, Prince of Wales|King of the United Kingdom since 2022|
Q9685|Diana, Princess of Wales|Princess Diana;Lady Diana Spencer;Diana|first wife of Charles III (1961–1997)|
Q36812|William, Prince of Wales|Prince William|elder son of Charles III|
Q152316|Prince Harry, Duke of Sussex|Prince Harry;Harry|younger son of Charles III|
Q10479|Catherine, Princess of Wales|Kate Middleton;Catherine Middleton|wife of William, Prince of Wales|?
Q517|Napoleon|Napoleon Bonaparte;Napoléon I|Emperor of the French (1769–1821)|
Q9696|John F. Kennedy|JFK;John Fitzgerald Kennedy|35th president of the United States (1917–1963)|
Q165421|Jacqueline Kennedy Onassis|Jackie Kennedy;Jacqueline Bouvier|First Lady of the United States (1961–1963)|?
Q49174|Brookline|Brookline, Massachusetts|town in Massachusetts, United States|?
Q91|Abraham Lincoln|Lincoln;Honest Abe|16th president of the United States (1809–1865)|
Q23|George Washington|Washington|1st president of the United States (1732–1799)|
Q1384001|Henry Bacon|Henry Bacon Jr.|American architect (1866–1924)|?
Q1397839|Robert Mills|Robert Mills (architect)|American architect (1781–1855)|?
Q47716|Charleston|Charleston, South Carolina|city in South Carolina, United States|?
Q1378420|James Hoban||Irish-American architect (c. 1758–1831)|?
Q274816|Shah Jahan|Shahjahan|Mughal emperor (1592–1666)|?
Q241796|Mumtaz Mahal|Arjumand Banu Begum|Mughal empress, wife of Shah Jahan (1593–1631)|?
Q193451|Paul Landowski|Landowski|French sculptor (1875–1961)|?
Q191069|Boulogne-Billancourt||commune in Hauts-de-Seine, France|?
Q335463|Pierre Cuypers|Petrus Josephus Hubertus Cuypers;P. J. H. Cuypers|Dutch architect (1827–1921)|?
Q23548|NASA|National Aeronautics and Space Administration|space agency of the United States|
Q193701|SpaceX|Space Exploration Technologies Corp.;Space Exploration Technologies|American spaceflight company|
Q317521|Elon Musk|Elon Reeve Musk;Musk|businessman, founder of SpaceX|
Q49117|University of Pennsylvania|UPenn;Penn|private university in Philadelphia|?
Q1145|Queen's University|Queen's University at Kingston|public university in Kingston, Ontario|?
Q219913|Falcon 9|Falcon 9 v1.1|two-stage partially reusable orbital launch vehicle by SpaceX|?
Q2297133|Falcon Heavy|Falcon 9 Heavy|heavy-lift launch vehicle by SpaceX|?
Q1152125|Deep Space Climate Observatory|DSCOVR;Triana|space weather and Earth observation satellite at Sun–Earth L1|?
Q1183795|National Oceanic and Atmospheric Administration|NOAA|US scientific and regulatory agency|?
Q241050|Eileen Collins|Eileen Marie Collins;Eileen M. Collins|American astronaut, first woman to pilot and command a Space Shuttle|?
Q11223|United States Air Force|USAF;U.S. Air Force;Air Force|air service branch of the US Armed Forces|
Q41506|Stanford University|Stanford;Leland Stanford Junior University|private research university in California|
Q617433|Syracuse University|SU;Cuse|private research university in Syracuse, New York|?
Q217574|STS-63|Near-Mir|1995 Space Shuttle Discovery mission|?
Q217524|STS-93||1999 Space Shuttle Columbia mission that deployed Chandra|?
Q217605|STS-114|Return to Flight|2005 Space Shuttle Discovery mission|?
Q48956|Space Shuttle Discovery|Discovery;OV-103|Space Shuttle orbiter|?
Q48958|Space Shuttle Columbia|Columbia;OV-102|Space Shuttle orbiter|?
Q312980|Michael Collins|Michael Collins (astronaut)|American astronaut, Apollo 11 command module pilot (1930–2021)|?
Q1615|Neil Armstrong|Neil Alden Armstrong;Armstrong|American astronaut, first person to walk on the Moon (1930–2012)|
Q2252|Buzz Aldrin|Edwin Eugene Aldrin Jr.;Edwin Aldrin|American astronaut (born 1930)|
Q43653|Apollo 11||1969 crewed spaceflight that first landed humans on the Moon|
Q985467|Wapakoneta|Wapakoneta, Ohio|city in Ohio, United States|?
Q1107|Naples|Naples, Florida|city in Florida, United States|?
Q812|Florida|FL|state of the United States of America|
Q405|Moon|the Moon;Luna|natural satellite of Earth|
Q2|Earth|the Earth;Terra;planet Earth|third planet from the Sun|
Q525|Sun|the Sun;Sol|star at the centre of the Solar System|
Q2513|Hubble Space Telescope|HST;Hubble|space telescope launched in 1990|?
Q11303111|Edwin Hubble|Edwin Powell Hubble|American astronomer (1889–1953)|?
Q1199049|Marshfield|Marshfield, Missouri|city in Missouri, United States|?
Q984600|San Marino|San Marino, California|city in California, United States|?
Q238|San Marino|Republic of San Marino|microstate enclaved in Italy|
Q1124700|Hubble eXtreme Deep Field|XDF;eXtreme Deep Field|2012 image of a small region of sky in the constellation Fornax|?
Q8913|Fornax|The Furnace|constellation of the southern sky|?
Q8486|coffee|cup of coffee|brewed drink prepared from roasted coffee beans|
Q40050|drink|beverage|liquid intended for human consumption|
Q146|house cat|cat;domestic cat;Felis catus|domesticated small carnivorous mammal|
Q228283|Felis|wildcats|genus of small wild cats|?
Q5|human|person;people|common name of Homo sapiens|
Q515|city|town|large and permanent human settlement|
Q6256|country|nation|distinct territorial body or political entity|
Q3624078|sovereign state|independent state|state with its own government and sovereignty|
Q5107|continent|continents|large landmass|
Q8142|currency|money|means of exchange|
Q12518|tower|towers|tall human-made structure|
Q2977|cathedral|cathedrals|Christian church that contains the seat of a bishop|
Q33506|museum|museums|institution that holds artifacts and other objects|
Q12280|bridge|bridges|structure that spans an obstacle|
Q3305213|painting|paintings|work of art made with paint|
Q7725634|literary work|work of literature;book|written work of literature|
Q11303|skyscraper|high-rise|tall habitable building|
Q179700|statue|statues|free-standing sculpture|
Q3918|university|universities|academic institution of higher education|
Q634|planet|planets|celestial body orbiting a star|
Q697175|launch vehicle|rocket;carrier rocket|rocket used to carry a payload into space|
Q4830453|business|company;enterprise;firm|organization undertaking commercial activity|
Q42973|architect|architects|person trained to plan and design buildings|
Q81096|engineer|engineers|professional practitioner of engineering|
Q1281618|sculptor|sculptors|artist who makes sculptures|
Q1028181|painter|painters|artist who paints|
Q36180|writer|author;writers|person who uses written words|
Q49757|poet|poets|person who writes poetry|
Q169470|physicist|physicists|scientist who does research in physics|
Q593644|chemist|chemists|scientist who studies chemistry|
Q36834|composer|composers|person who creates music|
Q11631|astronaut|cosmonaut;spacefarer|person trained to travel into space|
Q82955|politician|politicians|person involved in politics|
Q131524|entrepreneur|businessperson;businessman|person who starts a business|
Q170790|mathematician|mathematicians|person with an extensive knowledge of mathematics|
Q11063|astronomer|astronomers|scientist who studies celestial bodies|
Q4916|euro|EUR;€|currency of the eurozone|
Q25224|pound sterling|GBP;£;British pound;sterling|currency of the United Kingdom|
Q4917|United States dollar|USD;US dollar;$;dollar|currency of the United States|
Q8146|Japanese yen|JPY;yen;¥|currency of Japan|
Q25344|Swiss franc|CHF;franc|currency of Switzerland and Liechtenstein|?
Q123213|Polish złoty|PLN;zloty;złoty|currency of Poland|?
Q131645|Romanian leu|RON;leu|currency of Romania|?
Q847739|Central African CFA franc|XAF;CFA franc|currency of six Central African states|?
Q41588|Indonesian rupiah|IDR;rupiah|currency of Indonesia|?
Q25417|Danish krone|DKK;krone|currency of Denmark|?
Q122922|Swedish krona|SEK;krona|currency of Sweden|?
Q132643|Norwegian krone|NOK|currency of Norway|?
Q41044|Russian ruble|RUB;rouble|currency of Russia|?
Q39099|renminbi|RMB;yuan;CNY|currency of the People's Republic of China|?
Q259502|Australian dollar|AUD|currency of Australia|?
Q1104069|Canadian dollar|CAD|currency of Canada|?
Q173117|Brazilian real|BRL;real|currency of Brazil|?
Q80524|Indian rupee|INR;rupee|currency of India|?
Q181907|South African rand|ZAR;rand|currency of South Africa|?
Q47190|Hungarian forint|HUF;forint|currency of Hungary|?
Q131016|Czech koruna|CZK;koruna|currency of the Czech Republic|?
Q4730|Mexican peso|MXN;peso|currency of Mexico|?
Q150|French|French language;français|Romance language|
Q652|Italian|Italian language;italiano|Romance language|
Q188|German|German language;Deutsch|West Germanic language|
Q1860|English|English language|West Germanic language|
Q1321|Spanish|Spanish language;Castilian;español|Romance language|
Q9142|Irish|Irish language;Gaeilge;Irish Gaelic|Celtic language|
Q7411|Dutch|Dutch language;Nederlands|West Germanic language|
Q809|Polish|Polish language;polski|West Slavic language|
Q7913|Romanian|Romanian language;română|Romance language|
Q5146|Portuguese|Portuguese language;português|Romance language|
Q7737|Russian|Russian language;русский|East Slavic language|
Q9129|Greek|Greek language;Modern Greek|Indo-European language|
Q9027|Swedish|Swedish language;svenska|North Germanic language|
Q9067|Hungarian|Hungarian language;magyar|Uralic language|
Q9240|Indonesian|Indonesian language;Bahasa Indonesia|Malayic language|
Q13955|Arabic|Arabic language|Semitic language|
Q1412|Finnish|Finnish language;suomi|Uralic language|
Q9043|Norwegian|Norwegian language;norsk|North Germanic language|
Q9051|Luxembourgish|Luxembourgish language;Lëtzebuergesch|West Germanic language|
Q13199|Romansh|Romansh language;rumantsch|Romance language|
Q1568|Hindi|Hindi language|Indo-Aryan language|
""".strip()

# --------------------------------------------------------------------------- facts
# head | PID | tail, by label when the label is unique in ENTITIES, else by QID.
FACTS = """
# --- countries: capital, continent, currency, language, borders
France|P36|Paris
France|P30|Europe
France|P38|euro
France|P37|French
France|P31|sovereign state
France|P150|Île-de-France
Italy|P36|Rome
Italy|P30|Europe
Italy|P38|euro
Italy|P37|Italian
Italy|P31|sovereign state
Italy|P150|Lazio
Italy|P150|Tuscany
Italy|P150|Lombardy
Germany|P36|Berlin
Germany|P30|Europe
Germany|P38|euro
Germany|P37|German
Germany|P31|sovereign state
Germany|P150|Bavaria
Germany|P150|Berlin
United Kingdom|P36|London
United Kingdom|P30|Europe
United Kingdom|P38|pound sterling
United Kingdom|P31|sovereign state
United Kingdom|P150|England
United Kingdom|P150|Scotland
United States|P36|Washington, D.C.
United States|P30|North America
United States|P38|United States dollar
United States|P31|sovereign state
United States|P150|New York
United States|P150|California
United States|P150|Illinois
United States|P150|Pennsylvania
United States|P150|Wisconsin
United States|P150|Missouri
United States|P150|Arizona
United States|P150|Ohio
United States|P150|Massachusetts
United States|P150|Texas
United States|P150|Florida
United States|P150|New Jersey
United States|P150|Q1428
Japan|P36|Tokyo
Japan|P30|Asia
Japan|P38|Japanese yen
Japan|P31|sovereign state
Spain|P36|Madrid
Spain|P30|Europe
Spain|P38|euro
Spain|P37|Spanish
Spain|P31|sovereign state
Spain|P150|Catalonia
Ireland|P36|Dublin
Ireland|P30|Europe
Ireland|P38|euro
Ireland|P37|Irish
Ireland|P37|English
Ireland|P31|sovereign state
Belgium|P36|Brussels
Belgium|P30|Europe
Belgium|P38|euro
Belgium|P37|Dutch
Belgium|P37|French
Belgium|P37|German
Netherlands|P36|Amsterdam
Netherlands|P30|Europe
Netherlands|P38|euro
Netherlands|P37|Dutch
Austria|P36|Vienna
Austria|P30|Europe
Austria|P38|euro
Austria|P37|German
Switzerland|P36|Bern
Switzerland|P30|Europe
Switzerland|P38|Swiss franc
Switzerland|P37|German
Switzerland|P37|French
Switzerland|P37|Italian
Switzerland|P37|Romansh
Poland|P36|Warsaw
Poland|P30|Europe
Poland|P38|Polish złoty
Poland|P37|Polish
Romania|P36|Bucharest
Romania|P30|Europe
Romania|P38|Romanian leu
Romania|P37|Romanian
Chad|P36|N'Djamena
Chad|P30|Africa
Chad|P38|Central African CFA franc
Chad|P37|French
Chad|P37|Arabic
Indonesia|P38|Indonesian rupiah
Indonesia|P37|Indonesian
Monaco|P30|Europe
Monaco|P38|euro
Monaco|P37|French
Denmark|P36|Copenhagen
Denmark|P30|Europe
Denmark|P38|Danish krone
Sweden|P36|Stockholm
Sweden|P30|Europe
Sweden|P38|Swedish krona
Sweden|P37|Swedish
Norway|P36|Oslo
Norway|P30|Europe
Norway|P38|Norwegian krone
Norway|P37|Norwegian
Finland|P36|Helsinki
Finland|P30|Europe
Finland|P38|euro
Finland|P37|Finnish
Finland|P37|Swedish
Russia|P36|Moscow
Russia|P30|Europe
Russia|P30|Asia
Russia|P38|Russian ruble
Russia|P37|Russian
People's Republic of China|P36|Beijing
People's Republic of China|P30|Asia
People's Republic of China|P38|renminbi
Q408|P36|Canberra
Q408|P30|Q3960
Q408|P38|Australian dollar
Canada|P36|Ottawa
Canada|P30|North America
Canada|P38|Canadian dollar
Canada|P37|English
Canada|P37|French
Brazil|P36|Brasília
Brazil|P30|South America
Brazil|P38|Brazilian real
Brazil|P37|Portuguese
India|P36|New Delhi
India|P30|Asia
India|P38|Indian rupee
India|P37|Hindi
India|P37|English
Egypt|P36|Cairo
Egypt|P30|Africa
Egypt|P37|Arabic
South Africa|P30|Africa
South Africa|P36|Pretoria
South Africa|P38|South African rand
Greece|P36|Athens
Greece|P30|Europe
Greece|P38|euro
Greece|P37|Greek
Portugal|P36|Lisbon
Portugal|P30|Europe
Portugal|P38|euro
Portugal|P37|Portuguese
Hungary|P36|Budapest
Hungary|P30|Europe
Hungary|P38|Hungarian forint
Hungary|P37|Hungarian
Czech Republic|P36|Prague
Czech Republic|P30|Europe
Czech Republic|P38|Czech koruna
Mexico|P36|Mexico City
Mexico|P30|North America
Mexico|P38|Mexican peso
Argentina|P36|Buenos Aires
Argentina|P30|South America
Argentina|P47|Brazil
Argentina|P31|sovereign state
Buenos Aires|P1376|Argentina
Buenos Aires|P17|Argentina
Henderson|P131|New York
Henderson|P17|United States
Caprese Michelangelo|P131|Tuscany
Caprese Michelangelo|P17|Italy
Osborne House|P17|United Kingdom
Osborne House|P131|England
Q32|P36|Q1842
Q32|P30|Europe
Q32|P38|euro
Q32|P37|Luxembourgish
Q32|P37|French
Q32|P37|German
Q230|P36|Tbilisi
Q230|P31|sovereign state
Q1428|P36|Atlanta
Q1428|P17|United States
Pakistan|P30|Asia
Vatican City|P30|Europe
Vatican City|P47|Italy
Q238|P47|Italy
Q238|P30|Europe
France|P47|Germany
France|P47|Italy
France|P47|Spain
France|P47|Belgium
France|P47|Switzerland
France|P47|Q32
France|P47|Monaco
Monaco|P47|France
Germany|P47|France
Germany|P47|Austria
Germany|P47|Switzerland
Germany|P47|Poland
Germany|P47|Netherlands
Germany|P47|Belgium
Germany|P47|Denmark
Germany|P47|Czech Republic
Germany|P47|Q32
Italy|P47|France
Italy|P47|Switzerland
Italy|P47|Austria
Italy|P47|Vatican City
Spain|P47|France
Spain|P47|Portugal
Portugal|P47|Spain
Ireland|P47|United Kingdom
United Kingdom|P47|Ireland
Belgium|P47|Netherlands
Belgium|P47|France
Belgium|P47|Germany
Belgium|P47|Q32
Netherlands|P47|Belgium
Netherlands|P47|Germany
Austria|P47|Germany
Austria|P47|Switzerland
Austria|P47|Italy
Austria|P47|Hungary
Austria|P47|Czech Republic
Switzerland|P47|France
Switzerland|P47|Germany
Switzerland|P47|Italy
Switzerland|P47|Austria
Poland|P47|Germany
Poland|P47|Czech Republic
Poland|P47|Russia
Czech Republic|P47|Germany
Czech Republic|P47|Poland
Czech Republic|P47|Austria
Hungary|P47|Austria
Hungary|P47|Romania
Romania|P47|Hungary
Denmark|P47|Germany
Sweden|P47|Norway
Sweden|P47|Finland
Norway|P47|Sweden
Norway|P47|Finland
Norway|P47|Russia
Finland|P47|Sweden
Finland|P47|Norway
Finland|P47|Russia
Russia|P47|Norway
Russia|P47|Finland
Russia|P47|Poland
Russia|P47|People's Republic of China
People's Republic of China|P47|Russia
People's Republic of China|P47|India
India|P47|People's Republic of China
India|P47|Pakistan
United States|P47|Canada
United States|P47|Mexico
Canada|P47|United States
Mexico|P47|United States
Brazil|P47|Q414
Q32|P47|France
Q32|P47|Germany
Q32|P47|Belgium
Europe|P31|continent
Asia|P31|continent
North America|P31|continent
South America|P31|continent
Africa|P31|continent
Q3960|P31|continent
euro|P31|currency
pound sterling|P31|currency
United States dollar|P31|currency
Japanese yen|P31|currency
Swiss franc|P31|currency
Polish złoty|P31|currency
Japan|P31|country
France|P31|country
England|P31|country
Scotland|P31|country
# --- capitals and their countries
Paris|P1376|France
Paris|P17|France
Paris|P131|Île-de-France
Paris|P31|city
Paris|P190|Rome
Rome|P1376|Italy
Rome|P17|Italy
Rome|P131|Lazio
Rome|P31|city
Rome|P190|Paris
Berlin|P1376|Germany
Berlin|P17|Germany
Berlin|P31|city
Berlin|P190|Paris
London|P1376|United Kingdom
London|P17|United Kingdom
London|P131|England
London|P31|city
Washington, D.C.|P1376|United States
Washington, D.C.|P17|United States
Washington, D.C.|P138|George Washington
Washington, D.C.|P190|Beijing
Beijing|P190|Washington, D.C.
Tokyo|P1376|Japan
Tokyo|P17|Japan
Tokyo|P31|city
Tokyo|P190|New York City
New York City|P190|Tokyo
Madrid|P1376|Spain
Madrid|P17|Spain
Dublin|P1376|Ireland
Dublin|P17|Ireland
Brussels|P1376|Belgium
Brussels|P17|Belgium
Amsterdam|P1376|Netherlands
Amsterdam|P17|Netherlands
Vienna|P1376|Austria
Vienna|P17|Austria
Bern|P17|Switzerland
Warsaw|P1376|Poland
Warsaw|P17|Poland
Bucharest|P1376|Romania
Bucharest|P17|Romania
N'Djamena|P1376|Chad
N'Djamena|P17|Chad
Jakarta|P17|Indonesia
Copenhagen|P1376|Denmark
Copenhagen|P17|Denmark
Stockholm|P1376|Sweden
Stockholm|P17|Sweden
Oslo|P1376|Norway
Oslo|P17|Norway
Helsinki|P1376|Finland
Helsinki|P17|Finland
Moscow|P1376|Russia
Moscow|P17|Russia
Beijing|P1376|People's Republic of China
Beijing|P17|People's Republic of China
Canberra|P1376|Q408
Canberra|P17|Q408
Ottawa|P1376|Canada
Ottawa|P17|Canada
Brasília|P1376|Brazil
Brasília|P17|Brazil
New Delhi|P1376|India
New Delhi|P17|India
Cairo|P1376|Egypt
Cairo|P17|Egypt
Pretoria|P17|South Africa
Athens|P1376|Greece
Athens|P17|Greece
Lisbon|P1376|Portugal
Lisbon|P17|Portugal
Budapest|P1376|Hungary
Budapest|P17|Hungary
Prague|P1376|Czech Republic
Prague|P17|Czech Republic
Mexico City|P1376|Mexico
Mexico City|P17|Mexico
Q1842|P1376|Q32
Q1842|P17|Q32
Tbilisi|P1376|Q230
Tbilisi|P17|Q230
Atlanta|P1376|Q1428
Atlanta|P17|United States
Atlanta|P131|Q1428
# --- other cities
New York City|P17|United States
New York City|P131|New York
New York City|P31|city
New York|P36|Albany
New York|P17|United States
Albany|P1376|New York
Albany|P131|New York
Albany|P17|United States
Elmira|P131|New York
Elmira|P17|United States
Syracuse|P131|New York
Syracuse|P17|United States
San Francisco|P131|California
San Francisco|P17|United States
Los Angeles|P131|California
Los Angeles|P17|United States
Santa Barbara|P131|California
Santa Barbara|P17|United States
Q984600|P131|California
Q984600|P17|United States
California|P17|United States
Chicago|P131|Illinois
Chicago|P17|United States
Illinois|P17|United States
Philadelphia|P131|Pennsylvania
Philadelphia|P17|United States
Pennsylvania|P17|United States
Richland Center|P131|Wisconsin
Richland Center|P17|United States
Wisconsin|P17|United States
Marshfield|P131|Missouri
Marshfield|P17|United States
Missouri|P17|United States
Phoenix|P131|Arizona
Phoenix|P17|United States
Arizona|P36|Phoenix
Arizona|P17|United States
Cincinnati|P131|Ohio
Cincinnati|P17|United States
Wapakoneta|P131|Ohio
Wapakoneta|P17|United States
Ohio|P17|United States
Boston|P131|Massachusetts
Boston|P17|United States
Boston|P190|Kyoto
Massachusetts|P36|Boston
Massachusetts|P17|United States
Q49111|P131|Massachusetts
Q49111|P17|United States
Brookline|P131|Massachusetts
Brookline|P17|United States
Princeton|P131|New Jersey
Princeton|P17|United States
New Jersey|P17|United States
Dallas|P131|Texas
Dallas|P17|United States
Q830149|P131|Texas
Q830149|P17|United States
Texas|P17|United States
Naples|P131|Florida
Naples|P17|United States
Florida|P17|United States
Charleston|P17|United States
Q350|P131|England
Q350|P17|United Kingdom
Stratford-upon-Avon|P131|England
Stratford-upon-Avon|P17|United Kingdom
Ramsgate|P131|England
Ramsgate|P17|United Kingdom
England|P17|United Kingdom
Scotland|P17|United Kingdom
Toronto|P17|Canada
Sydney|P17|Q408
Rio de Janeiro|P17|Brazil
Guangzhou|P17|People's Republic of China
Barcelona|P131|Catalonia
Barcelona|P17|Spain
Bilbao|P17|Spain
Catalonia|P17|Spain
Málaga|P17|Spain
Alcalá de Henares|P17|Spain
Île-de-France|P17|France
Bavaria|P17|Germany
Munich|P131|Bavaria
Munich|P17|Germany
Augsburg|P131|Bavaria
Augsburg|P17|Germany
Aachen|P17|Germany
Heidelberg|P17|Germany
Frankfurt am Main|P17|Germany
Weimar|P17|Germany
Leipzig|P17|Germany
Stuttgart|P17|Germany
Bonn|P17|Germany
Cologne|P17|Germany
Ulm|P17|Germany
Eisenach|P17|Germany
Neuruppin|P17|Germany
Dijon|P17|France
Besançon|P17|France
Marseille|P17|France
Lyon|P17|France
Colmar|P17|France
Poissy|P17|France
Poissy|P131|Île-de-France
Roquebrune-Cap-Martin|P17|France
Amboise|P17|France
Auvers-sur-Oise|P17|France
Auvers-sur-Oise|P131|Île-de-France
Mougins|P17|France
Boulogne-Billancourt|P17|France
Boulogne-Billancourt|P131|Île-de-France
Ajaccio|P17|France
Lazio|P17|Italy
Tuscany|P17|Italy
Lombardy|P17|Italy
Florence|P131|Tuscany
Florence|P17|Italy
Milan|P131|Lombardy
Milan|P17|Italy
Genoa|P17|Italy
Pisa|P131|Tuscany
Pisa|P17|Italy
Vinci|P131|Tuscany
Vinci|P17|Italy
Ravenna|P17|Italy
Salzburg|P17|Austria
Kyoto|P17|Japan
Kyoto|P190|Paris
Kyoto|P190|Boston
Osaka|P17|Japan
Zürich|P17|Switzerland
Geneva|P17|Switzerland
La Chaux-de-Fonds|P17|Switzerland
Roermond|P17|Netherlands
Leiden|P17|Netherlands
Delft|P17|Netherlands
The Hague|P17|Netherlands
Zundert|P17|Netherlands
Agra|P17|India
Lahore|P17|Pakistan
# --- landmarks and buildings
Eiffel Tower|P17|France
Eiffel Tower|P131|Paris
Eiffel Tower|P84|Stephen Sauvestre
Eiffel Tower|P138|Gustave Eiffel
Eiffel Tower|P31|tower
Statue of Liberty|P17|United States
Statue of Liberty|P131|New York City
Statue of Liberty|P170|Frédéric Auguste Bartholdi
Statue of Liberty|P31|statue
Colosseum|P17|Italy
Colosseum|P131|Rome
Sagrada Família|P17|Spain
Sagrada Família|P131|Barcelona
Sagrada Família|P84|Antoni Gaudí
Casa Milà|P131|Barcelona
Casa Milà|P17|Spain
Casa Milà|P84|Antoni Gaudí
Park Güell|P131|Barcelona
Park Güell|P17|Spain
Park Güell|P84|Antoni Gaudí
Brandenburg Gate|P131|Berlin
Brandenburg Gate|P17|Germany
Brandenburg Gate|P84|Carl Gotthard Langhans
Sydney Opera House|P131|Sydney
Sydney Opera House|P17|Q408
Sydney Opera House|P84|Jørn Utzon
Louvre|P131|Paris
Louvre|P17|France
Louvre|P31|museum
Louvre Pyramid|P131|Paris
Louvre Pyramid|P17|France
Louvre Pyramid|P84|I. M. Pei
Louvre Pyramid|P361|Louvre
Notre-Dame de Paris|P131|Paris
Notre-Dame de Paris|P17|France
Notre-Dame de Paris|P31|cathedral
Panthéon|P131|Paris
Panthéon|P17|France
Pantheon|P131|Rome
Pantheon|P17|Italy
Palais Garnier|P131|Paris
Palais Garnier|P17|France
Palais Garnier|P84|Charles Garnier
Arc de Triomphe|P131|Paris
Arc de Triomphe|P17|France
Arc de Triomphe|P88|Napoleon
Centre Pompidou|P131|Paris
Centre Pompidou|P17|France
Centre Pompidou|P84|Renzo Piano
Centre Pompidou|P84|Richard Rogers
Guggenheim Museum Bilbao|P131|Bilbao
Guggenheim Museum Bilbao|P17|Spain
Guggenheim Museum Bilbao|P84|Frank Gehry
Guggenheim Museum Bilbao|P31|museum
Solomon R. Guggenheim Museum|P131|New York City
Solomon R. Guggenheim Museum|P17|United States
Solomon R. Guggenheim Museum|P84|Frank Lloyd Wright
Solomon R. Guggenheim Museum|P31|museum
Walt Disney Concert Hall|P131|Los Angeles
Walt Disney Concert Hall|P17|United States
Walt Disney Concert Hall|P84|Frank Gehry
Dancing House|P131|Prague
Dancing House|P17|Czech Republic
Dancing House|P84|Frank Gehry
Fallingwater|P131|Pennsylvania
Fallingwater|P17|United States
Fallingwater|P84|Frank Lloyd Wright
St Paul's Cathedral|P131|London
St Paul's Cathedral|P17|United Kingdom
St Paul's Cathedral|P84|Christopher Wren
St Paul's Cathedral|P31|cathedral
Palace of Westminster|P131|London
Palace of Westminster|P17|United Kingdom
Palace of Westminster|P84|Charles Barry
Palace of Westminster|P84|Augustus Pugin
Big Ben|P131|London
Big Ben|P17|United Kingdom
Big Ben|P84|Augustus Pugin
Big Ben|P361|Palace of Westminster
Tower Bridge|P131|London
Tower Bridge|P17|United Kingdom
Tower Bridge|P84|Horace Jones
Tower Bridge|P31|bridge
The Shard|P131|London
The Shard|P17|United Kingdom
The Shard|P84|Renzo Piano
The Shard|P31|skyscraper
Lloyd's building|P131|London
Lloyd's building|P17|United Kingdom
Lloyd's building|P84|Richard Rogers
Seagram Building|P131|New York City
Seagram Building|P17|United States
Seagram Building|P84|Ludwig Mies van der Rohe
Seagram Building|P31|skyscraper
Neue Nationalgalerie|P131|Berlin
Neue Nationalgalerie|P17|Germany
Neue Nationalgalerie|P84|Ludwig Mies van der Rohe
Barcelona Pavilion|P131|Barcelona
Barcelona Pavilion|P17|Spain
Barcelona Pavilion|P84|Ludwig Mies van der Rohe
Villa Savoye|P131|Poissy
Villa Savoye|P17|France
Villa Savoye|P84|Le Corbusier
Unité d'habitation|P131|Marseille
Unité d'habitation|P17|France
Unité d'habitation|P84|Le Corbusier
Altes Museum|P131|Berlin
Altes Museum|P17|Germany
Altes Museum|P84|Karl Friedrich Schinkel
Konzerthaus Berlin|P131|Berlin
Konzerthaus Berlin|P17|Germany
Konzerthaus Berlin|P84|Karl Friedrich Schinkel
Florence Cathedral|P131|Florence
Florence Cathedral|P17|Italy
Florence Cathedral|P84|Filippo Brunelleschi
Florence Cathedral|P31|cathedral
St. Peter's Basilica|P17|Vatican City
St. Peter's Basilica|P84|Michelangelo
Chrysler Building|P131|New York City
Chrysler Building|P17|United States
Chrysler Building|P31|skyscraper
Empire State Building|P131|New York City
Empire State Building|P17|United States
Empire State Building|P31|skyscraper
Flatiron Building|P131|New York City
Flatiron Building|P17|United States
Flatiron Building|P84|Daniel Burnham
Golden Gate Bridge|P131|San Francisco
Golden Gate Bridge|P17|United States
Golden Gate Bridge|P31|bridge
Washington Monument|P131|Washington, D.C.
Washington Monument|P17|United States
Washington Monument|P84|Robert Mills
Washington Monument|P547|George Washington
White House|P131|Washington, D.C.
White House|P17|United States
White House|P84|James Hoban
Lincoln Memorial|P131|Washington, D.C.
Lincoln Memorial|P17|United States
Lincoln Memorial|P84|Henry Bacon
Lincoln Memorial|P547|Abraham Lincoln
Taj Mahal|P131|Agra
Taj Mahal|P17|India
Taj Mahal|P88|Shah Jahan
Leaning Tower of Pisa|P131|Pisa
Leaning Tower of Pisa|P17|Italy
Leaning Tower of Pisa|P31|tower
Cologne Cathedral|P131|Cologne
Cologne Cathedral|P17|Germany
Cologne Cathedral|P31|cathedral
Christ the Redeemer|P131|Rio de Janeiro
Christ the Redeemer|P17|Brazil
Christ the Redeemer|P170|Paul Landowski
Christ the Redeemer|P31|statue
Parthenon|P131|Athens
Parthenon|P17|Greece
Rijksmuseum|P131|Amsterdam
Rijksmuseum|P17|Netherlands
Rijksmuseum|P84|Pierre Cuypers
Rijksmuseum|P31|museum
Museum of Modern Art|P131|New York City
Museum of Modern Art|P17|United States
Museum of Modern Art|P31|museum
Museo Reina Sofía|P131|Madrid
Museo Reina Sofía|P17|Spain
Mauritshuis|P131|The Hague
Mauritshuis|P17|Netherlands
Uffizi|P131|Florence
Uffizi|P17|Italy
Santa Maria delle Grazie|P131|Milan
Santa Maria delle Grazie|P17|Italy
Galleria dell'Accademia|P131|Florence
Galleria dell'Accademia|P17|Italy
CN Tower|P131|Toronto
CN Tower|P17|Canada
CN Tower|P31|tower
# --- architects, artists, writers, scientists
Gustave Eiffel|P19|Dijon
Gustave Eiffel|P20|Paris
Gustave Eiffel|P27|France
Gustave Eiffel|P106|engineer
Gustave Eiffel|P31|human
Stephen Sauvestre|P19|Paris
Stephen Sauvestre|P20|Paris
Stephen Sauvestre|P27|France
Stephen Sauvestre|P106|architect
Stephen Sauvestre|P31|human
Frédéric Auguste Bartholdi|P19|Colmar
Frédéric Auguste Bartholdi|P20|Paris
Frédéric Auguste Bartholdi|P27|France
Frédéric Auguste Bartholdi|P106|sculptor
Frédéric Auguste Bartholdi|P31|human
Antoni Gaudí|P20|Barcelona
Antoni Gaudí|P27|Spain
Antoni Gaudí|P106|architect
Antoni Gaudí|P31|human
Jørn Utzon|P19|Copenhagen
Jørn Utzon|P20|Copenhagen
Jørn Utzon|P27|Denmark
Jørn Utzon|P106|architect
Jørn Utzon|P31|human
I. M. Pei|P19|Guangzhou
I. M. Pei|P20|New York City
I. M. Pei|P27|United States
I. M. Pei|P106|architect
I. M. Pei|P31|human
Frank Gehry|P19|Toronto
Frank Gehry|P27|Canada
Frank Gehry|P27|United States
Frank Gehry|P106|architect
Frank Gehry|P31|human
Frank Lloyd Wright|P19|Richland Center
Frank Lloyd Wright|P20|Phoenix
Frank Lloyd Wright|P27|United States
Frank Lloyd Wright|P106|architect
Frank Lloyd Wright|P31|human
Christopher Wren|P20|London
Christopher Wren|P106|architect
Christopher Wren|P106|mathematician
Christopher Wren|P106|astronomer
Christopher Wren|P31|human
Charles Barry|P19|London
Charles Barry|P20|London
Charles Barry|P106|architect
Charles Barry|P31|human
Augustus Pugin|P19|London
Augustus Pugin|P20|Ramsgate
Augustus Pugin|P106|architect
Augustus Pugin|P31|human
Daniel Burnham|P19|Henderson
Daniel Burnham|P20|Heidelberg
Daniel Burnham|P27|United States
Daniel Burnham|P106|architect
Daniel Burnham|P31|human
Horace Jones|P106|architect
Horace Jones|P31|human
Renzo Piano|P19|Genoa
Renzo Piano|P27|Italy
Renzo Piano|P106|architect
Renzo Piano|P31|human
Richard Rogers|P19|Florence
Richard Rogers|P20|London
Richard Rogers|P27|United Kingdom
Richard Rogers|P106|architect
Richard Rogers|P31|human
Ludwig Mies van der Rohe|P19|Aachen
Ludwig Mies van der Rohe|P20|Chicago
Ludwig Mies van der Rohe|P27|United States
Ludwig Mies van der Rohe|P27|Germany
Ludwig Mies van der Rohe|P106|architect
Ludwig Mies van der Rohe|P31|human
Le Corbusier|P19|La Chaux-de-Fonds
Le Corbusier|P20|Roquebrune-Cap-Martin
Le Corbusier|P27|Switzerland
Le Corbusier|P27|France
Le Corbusier|P106|architect
Le Corbusier|P31|human
Karl Friedrich Schinkel|P19|Neuruppin
Karl Friedrich Schinkel|P20|Berlin
Karl Friedrich Schinkel|P106|architect
Karl Friedrich Schinkel|P106|painter
Karl Friedrich Schinkel|P31|human
Carl Gotthard Langhans|P106|architect
Carl Gotthard Langhans|P31|human
Charles Garnier|P19|Paris
Charles Garnier|P20|Paris
Charles Garnier|P27|France
Charles Garnier|P106|architect
Charles Garnier|P31|human
Filippo Brunelleschi|P19|Florence
Filippo Brunelleschi|P20|Florence
Filippo Brunelleschi|P106|architect
Filippo Brunelleschi|P31|human
Pierre Cuypers|P19|Roermond
Pierre Cuypers|P20|Roermond
Pierre Cuypers|P27|Netherlands
Pierre Cuypers|P106|architect
Pierre Cuypers|P31|human
Henry Bacon|P106|architect
Henry Bacon|P27|United States
Henry Bacon|P31|human
Robert Mills|P19|Charleston
Robert Mills|P20|Washington, D.C.
Robert Mills|P27|United States
Robert Mills|P106|architect
Robert Mills|P31|human
James Hoban|P20|Washington, D.C.
James Hoban|P106|architect
James Hoban|P31|human
Paul Landowski|P19|Paris
Paul Landowski|P20|Boulogne-Billancourt
Paul Landowski|P27|France
Paul Landowski|P106|sculptor
Paul Landowski|P31|human
Michelangelo|P19|Caprese Michelangelo
Michelangelo|P20|Rome
Michelangelo|P106|sculptor
Michelangelo|P106|painter
Michelangelo|P106|architect
Michelangelo|P106|poet
Michelangelo|P31|human
David|P170|Michelangelo
David|P276|Galleria dell'Accademia
David|P31|statue
Leonardo da Vinci|P19|Vinci
Leonardo da Vinci|P20|Amboise
Leonardo da Vinci|P106|painter
Leonardo da Vinci|P106|engineer
Leonardo da Vinci|P106|architect
Leonardo da Vinci|P106|sculptor
Leonardo da Vinci|P31|human
Mona Lisa|P170|Leonardo da Vinci
Mona Lisa|P276|Louvre
Mona Lisa|P31|painting
The Last Supper|P170|Leonardo da Vinci
The Last Supper|P276|Santa Maria delle Grazie
The Last Supper|P31|painting
Vincent van Gogh|P19|Zundert
Vincent van Gogh|P20|Auvers-sur-Oise
Vincent van Gogh|P27|Netherlands
Vincent van Gogh|P106|painter
Vincent van Gogh|P31|human
The Starry Night|P170|Vincent van Gogh
The Starry Night|P276|Museum of Modern Art
The Starry Night|P31|painting
Pablo Picasso|P19|Málaga
Pablo Picasso|P20|Mougins
Pablo Picasso|P27|Spain
Pablo Picasso|P106|painter
Pablo Picasso|P106|sculptor
Pablo Picasso|P31|human
Guernica|P170|Pablo Picasso
Guernica|P276|Museo Reina Sofía
Guernica|P31|painting
Rembrandt|P19|Leiden
Rembrandt|P20|Amsterdam
Rembrandt|P106|painter
Rembrandt|P31|human
The Night Watch|P170|Rembrandt
The Night Watch|P276|Rijksmuseum
The Night Watch|P31|painting
Johannes Vermeer|P19|Delft
Johannes Vermeer|P20|Delft
Johannes Vermeer|P106|painter
Johannes Vermeer|P31|human
Girl with a Pearl Earring|P170|Johannes Vermeer
Girl with a Pearl Earring|P276|Mauritshuis
Girl with a Pearl Earring|P31|painting
Sandro Botticelli|P19|Florence
Sandro Botticelli|P20|Florence
Sandro Botticelli|P106|painter
Sandro Botticelli|P31|human
The Birth of Venus|P170|Sandro Botticelli
The Birth of Venus|P276|Uffizi
The Birth of Venus|P31|painting
Victor Hugo|P19|Besançon
Victor Hugo|P20|Paris
Victor Hugo|P27|France
Victor Hugo|P106|writer
Victor Hugo|P106|poet
Victor Hugo|P106|politician
Victor Hugo|P800|Les Misérables
Victor Hugo|P31|human
Les Misérables|P50|Victor Hugo
Les Misérables|P31|literary work
The Hunchback of Notre-Dame|P50|Victor Hugo
The Hunchback of Notre-Dame|P495|France
The Hunchback of Notre-Dame|P31|literary work
William Shakespeare|P19|Stratford-upon-Avon
William Shakespeare|P20|Stratford-upon-Avon
William Shakespeare|P106|writer
William Shakespeare|P106|poet
William Shakespeare|P31|human
Hamlet|P50|William Shakespeare
Hamlet|P31|literary work
Johann Wolfgang von Goethe|P19|Frankfurt am Main
Johann Wolfgang von Goethe|P20|Weimar
Johann Wolfgang von Goethe|P106|writer
Johann Wolfgang von Goethe|P106|poet
Johann Wolfgang von Goethe|P31|human
Faust|P50|Johann Wolfgang von Goethe
Faust|P31|literary work
Dante Alighieri|P19|Florence
Dante Alighieri|P20|Ravenna
Dante Alighieri|P106|poet
Dante Alighieri|P31|human
Divine Comedy|P50|Dante Alighieri
Divine Comedy|P31|literary work
Miguel de Cervantes|P19|Alcalá de Henares
Miguel de Cervantes|P20|Madrid
Miguel de Cervantes|P106|writer
Miguel de Cervantes|P31|human
Don Quixote|P50|Miguel de Cervantes
Don Quixote|P31|literary work
Douglas Adams|P19|Q350
Douglas Adams|P20|Santa Barbara
Douglas Adams|P27|United Kingdom
Douglas Adams|P106|writer
Douglas Adams|P31|human
The Hitchhiker's Guide to the Galaxy|P50|Douglas Adams
The Hitchhiker's Guide to the Galaxy|P31|literary work
Albert Einstein|P19|Ulm
Albert Einstein|P20|Princeton
Albert Einstein|P27|Switzerland
Albert Einstein|P27|United States
Albert Einstein|P69|ETH Zurich
Albert Einstein|P106|physicist
Albert Einstein|P166|Nobel Prize in Physics
Albert Einstein|P31|human
ETH Zurich|P131|Zürich
ETH Zurich|P17|Switzerland
ETH Zurich|P31|university
Marie Curie|P19|Warsaw
Marie Curie|P26|Pierre Curie
Marie Curie|P40|Irène Joliot-Curie
Marie Curie|P27|France
Marie Curie|P69|University of Paris
Marie Curie|P106|physicist
Marie Curie|P106|chemist
Marie Curie|P166|Nobel Prize in Physics
Marie Curie|P166|Nobel Prize in Chemistry
Marie Curie|P31|human
Pierre Curie|P19|Paris
Pierre Curie|P20|Paris
Pierre Curie|P26|Marie Curie
Pierre Curie|P40|Irène Joliot-Curie
Pierre Curie|P27|France
Pierre Curie|P106|physicist
Pierre Curie|P166|Nobel Prize in Physics
Pierre Curie|P31|human
Irène Joliot-Curie|P19|Paris
Irène Joliot-Curie|P20|Paris
Irène Joliot-Curie|P22|Pierre Curie
Irène Joliot-Curie|P25|Marie Curie
Irène Joliot-Curie|P26|Frédéric Joliot-Curie
Irène Joliot-Curie|P106|chemist
Irène Joliot-Curie|P166|Nobel Prize in Chemistry
Irène Joliot-Curie|P31|human
Frédéric Joliot-Curie|P26|Irène Joliot-Curie
Frédéric Joliot-Curie|P19|Paris
Frédéric Joliot-Curie|P20|Paris
Frédéric Joliot-Curie|P106|physicist
Frédéric Joliot-Curie|P166|Nobel Prize in Chemistry
Frédéric Joliot-Curie|P31|human
University of Paris|P131|Paris
University of Paris|P17|France
University of Paris|P31|university
Isaac Newton|P106|mathematician
Isaac Newton|P106|physicist
Isaac Newton|P106|astronomer
Isaac Newton|P31|human
Galileo Galilei|P19|Pisa
Galileo Galilei|P106|astronomer
Galileo Galilei|P106|physicist
Galileo Galilei|P106|mathematician
Galileo Galilei|P31|human
Wolfgang Amadeus Mozart|P19|Salzburg
Wolfgang Amadeus Mozart|P20|Vienna
Wolfgang Amadeus Mozart|P22|Leopold Mozart
Wolfgang Amadeus Mozart|P106|composer
Wolfgang Amadeus Mozart|P31|human
Leopold Mozart|P19|Augsburg
Leopold Mozart|P20|Salzburg
Leopold Mozart|P40|Wolfgang Amadeus Mozart
Leopold Mozart|P106|composer
Leopold Mozart|P31|human
Ludwig van Beethoven|P19|Bonn
Ludwig van Beethoven|P20|Vienna
Ludwig van Beethoven|P106|composer
Ludwig van Beethoven|P31|human
Johann Sebastian Bach|P19|Eisenach
Johann Sebastian Bach|P20|Leipzig
Johann Sebastian Bach|P106|composer
Johann Sebastian Bach|P31|human
Frédéric Chopin|P20|Paris
Frédéric Chopin|P106|composer
Frédéric Chopin|P31|human
# --- royals and presidents
Queen Victoria|P26|Albert, Prince Consort
Queen Victoria|P20|Osborne House
Queen Victoria|P19|London
Queen Victoria|P31|human
Albert, Prince Consort|P26|Queen Victoria
Albert, Prince Consort|P31|human
Elizabeth II|P19|London
Elizabeth II|P26|Prince Philip, Duke of Edinburgh
Elizabeth II|P40|Charles III
Elizabeth II|P27|United Kingdom
Elizabeth II|P31|human
Prince Philip, Duke of Edinburgh|P26|Elizabeth II
Prince Philip, Duke of Edinburgh|P40|Charles III
Prince Philip, Duke of Edinburgh|P31|human
Charles III|P22|Prince Philip, Duke of Edinburgh
Charles III|P25|Elizabeth II
Charles III|P19|London
Charles III|P26|Diana, Princess of Wales
Charles III|P40|William, Prince of Wales
Charles III|P40|Prince Harry, Duke of Sussex
Charles III|P27|United Kingdom
Charles III|P31|human
Diana, Princess of Wales|P26|Charles III
Diana, Princess of Wales|P40|William, Prince of Wales
Diana, Princess of Wales|P40|Prince Harry, Duke of Sussex
Diana, Princess of Wales|P20|Paris
Diana, Princess of Wales|P31|human
William, Prince of Wales|P22|Charles III
William, Prince of Wales|P25|Diana, Princess of Wales
William, Prince of Wales|P26|Catherine, Princess of Wales
William, Prince of Wales|P19|London
William, Prince of Wales|P31|human
Prince Harry, Duke of Sussex|P22|Charles III
Prince Harry, Duke of Sussex|P25|Diana, Princess of Wales
Prince Harry, Duke of Sussex|P19|London
Prince Harry, Duke of Sussex|P31|human
Catherine, Princess of Wales|P26|William, Prince of Wales
Catherine, Princess of Wales|P31|human
Napoleon|P19|Ajaccio
Napoleon|P27|France
Napoleon|P106|politician
Napoleon|P31|human
John F. Kennedy|P19|Brookline
John F. Kennedy|P20|Dallas
John F. Kennedy|P26|Jacqueline Kennedy Onassis
John F. Kennedy|P27|United States
John F. Kennedy|P106|politician
John F. Kennedy|P31|human
Jacqueline Kennedy Onassis|P26|John F. Kennedy
Jacqueline Kennedy Onassis|P20|New York City
Jacqueline Kennedy Onassis|P31|human
Abraham Lincoln|P20|Washington, D.C.
Abraham Lincoln|P27|United States
Abraham Lincoln|P106|politician
Abraham Lincoln|P31|human
George Washington|P27|United States
George Washington|P106|politician
George Washington|P31|human
Shah Jahan|P19|Lahore
Shah Jahan|P20|Agra
Shah Jahan|P26|Mumtaz Mahal
Shah Jahan|P31|human
Mumtaz Mahal|P26|Shah Jahan
Mumtaz Mahal|P31|human
# --- spaceflight
NASA|P17|United States
NASA|P159|Washington, D.C.
SpaceX|P17|United States
SpaceX|P112|Elon Musk
SpaceX|P31|business
Elon Musk|P19|Pretoria
Elon Musk|P27|South Africa
Elon Musk|P27|Canada
Elon Musk|P27|United States
Elon Musk|P69|University of Pennsylvania
Elon Musk|P69|Queen's University
Elon Musk|P106|entrepreneur
Elon Musk|P31|human
University of Pennsylvania|P131|Philadelphia
University of Pennsylvania|P17|United States
University of Pennsylvania|P31|university
Queen's University|P17|Canada
Queen's University|P31|university
Falcon 9|P176|SpaceX
Falcon 9|P495|United States
Falcon 9|P31|launch vehicle
Falcon Heavy|P176|SpaceX
Falcon Heavy|P495|United States
Falcon Heavy|P31|launch vehicle
Deep Space Climate Observatory|P375|Falcon 9
Deep Space Climate Observatory|P137|National Oceanic and Atmospheric Administration
Deep Space Climate Observatory|P137|NASA
National Oceanic and Atmospheric Administration|P17|United States
Eileen Collins|P19|Elmira
Eileen Collins|P27|United States
Eileen Collins|P106|astronaut
Eileen Collins|P108|NASA
Eileen Collins|P241|United States Air Force
Eileen Collins|P69|Syracuse University
Eileen Collins|P69|Stanford University
Eileen Collins|P31|human
Syracuse University|P131|Syracuse
Syracuse University|P17|United States
Syracuse University|P31|university
Stanford University|P131|California
Stanford University|P17|United States
Stanford University|P31|university
STS-63|P1029|Eileen Collins
STS-63|P137|NASA
STS-93|P1029|Eileen Collins
STS-93|P137|NASA
STS-114|P1029|Eileen Collins
STS-114|P137|NASA
Space Shuttle Discovery|P137|NASA
Space Shuttle Columbia|P137|NASA
Michael Collins|P19|Rome
Michael Collins|P20|Naples
Michael Collins|P27|United States
Michael Collins|P106|astronaut
Michael Collins|P108|NASA
Michael Collins|P241|United States Air Force
Michael Collins|P31|human
Neil Armstrong|P19|Wapakoneta
Neil Armstrong|P20|Cincinnati
Neil Armstrong|P27|United States
Neil Armstrong|P106|astronaut
Neil Armstrong|P108|NASA
Neil Armstrong|P31|human
Buzz Aldrin|P27|United States
Buzz Aldrin|P106|astronaut
Buzz Aldrin|P241|United States Air Force
Buzz Aldrin|P31|human
Apollo 11|P1029|Neil Armstrong
Apollo 11|P1029|Buzz Aldrin
Apollo 11|P1029|Michael Collins
Apollo 11|P137|NASA
Moon|P397|Earth
Moon|P31|natural satellite
Earth|P397|Sun
Earth|P31|planet
Hubble Space Telescope|P138|Edwin Hubble
Hubble Space Telescope|P137|NASA
Edwin Hubble|P19|Marshfield
Edwin Hubble|P20|Q984600
Edwin Hubble|P27|United States
Edwin Hubble|P106|astronomer
Edwin Hubble|P31|human
Hubble eXtreme Deep Field|P59|Fornax
coffee|P279|drink
house cat|P171|Felis
""".strip()

# --------------------------------------------------------------------------- images
# skimage sample photographs: function name -> (entity QID, file stem). What each shows
# is stated by its docstring in skimage.data (quoted in README.md).
PHOTOS = {
    "astronaut": ("Q241050", "eileen_collins"),          # "Color image of the astronaut Eileen Collins."
    "rocket": ("Q219913", "falcon9_dscovr_launch"),       # "Launch photo of DSCOVR on Falcon 9 by SpaceX."
    "hubble_deep_field": ("Q1124700", "hubble_xdf"),      # "Hubble eXtreme Deep Field."
    "coffee": ("Q8486", "coffee_cup"),                    # "Coffee cup."
    "chelsea": ("Q146", "chelsea_the_cat"),               # "Chelsea the cat."
    "moon": ("Q405", "moon_surface"),                     # "Surface of the moon."
}

# National flags drawn to their official proportions (height:width) and colours.
# Each flag is linked as the image of its country (README.md says so).
FLAGS = {
    "France": "Q142", "Italy": "Q38", "Germany": "Q183", "Ireland": "Q27", "Belgium": "Q31",
    "Netherlands": "Q55", "Luxembourg": "Q32", "Austria": "Q40", "Poland": "Q36",
    "Indonesia": "Q252", "Monaco": "Q235", "Romania": "Q218", "Chad": "Q657", "Japan": "Q17",
    "Switzerland": "Q39", "Denmark": "Q35", "Sweden": "Q34", "Finland": "Q33", "Norway": "Q20",
    "Russia": "Q159", "Hungary": "Q28", "Czech Republic": "Q213",
}

FLAG_HEIGHT = 200


def _stripes(ratio, colours, vertical):
    from PIL import Image, ImageDraw

    h = FLAG_HEIGHT
    w = round(h * ratio[1] / ratio[0])
    im = Image.new("RGB", (w, h))
    d = ImageDraw.Draw(im)
    n = len(colours)
    for i, c in enumerate(colours):
        if vertical:
            d.rectangle([round(i * w / n), 0, round((i + 1) * w / n) - 1, h - 1], fill=c)
        else:
            d.rectangle([0, round(i * h / n), w - 1, round((i + 1) * h / n) - 1], fill=c)
    return im


def _nordic(units_w, units_h, field, cross, inner=None):
    """Nordic cross: units_w/units_h are the widths of the stripes along each axis.

    For a bordered cross (Norway) ``inner`` = (colour, border units)."""
    from PIL import Image, ImageDraw

    W, H = sum(units_w), sum(units_h)
    s = FLAG_HEIGHT / H
    im = Image.new("RGB", (round(W * s), FLAG_HEIGHT), field)
    d = ImageDraw.Draw(im)
    x0, x1 = units_w[0], units_w[0] + units_w[1]
    y0, y1 = units_h[0], units_h[0] + units_h[1]
    d.rectangle([round(x0 * s), 0, round(x1 * s) - 1, FLAG_HEIGHT - 1], fill=cross)
    d.rectangle([0, round(y0 * s), im.width - 1, round(y1 * s) - 1], fill=cross)
    if inner:
        colour, b = inner
        d.rectangle([round((x0 + b) * s), 0, round((x1 - b) * s) - 1, FLAG_HEIGHT - 1], fill=colour)
        d.rectangle([0, round((y0 + b) * s), im.width - 1, round((y1 - b) * s) - 1], fill=colour)
    return im


def draw_flag(name):
    from PIL import Image, ImageDraw

    W = "#FFFFFF"
    if name == "France":
        return _stripes((2, 3), ["#0055A4", W, "#EF4135"], True)
    if name == "Italy":
        return _stripes((2, 3), ["#009246", W, "#CE2B37"], True)
    if name == "Germany":
        return _stripes((3, 5), ["#000000", "#DD0000", "#FFCE00"], False)
    if name == "Ireland":
        return _stripes((1, 2), ["#169B62", W, "#FF883E"], True)
    if name == "Belgium":
        return _stripes((13, 15), ["#000000", "#FDDA24", "#EF3340"], True)
    if name == "Netherlands":
        return _stripes((2, 3), ["#AE1C28", W, "#21468B"], False)
    if name == "Luxembourg":
        return _stripes((3, 5), ["#EA141D", W, "#51ADDA"], False)
    if name == "Austria":
        return _stripes((2, 3), ["#C8102E", W, "#C8102E"], False)
    if name == "Poland":
        return _stripes((5, 8), [W, "#DC143C"], False)
    if name == "Indonesia":
        return _stripes((2, 3), ["#FF0000", W], False)
    if name == "Monaco":
        return _stripes((4, 5), ["#CE1126", W], False)
    if name == "Romania":
        return _stripes((2, 3), ["#002B7F", "#FCD116", "#CE1126"], True)
    if name == "Chad":
        return _stripes((2, 3), ["#002664", "#FECB00", "#C60C30"], True)
    if name == "Russia":
        return _stripes((2, 3), [W, "#0039A6", "#D52B1E"], False)
    if name == "Hungary":
        return _stripes((1, 2), ["#CE2939", W, "#477050"], False)
    if name == "Japan":  # white field, red disc of 3/5 of the height, centred
        h = FLAG_HEIGHT
        im = Image.new("RGB", (round(h * 1.5), h), W)
        r = 0.3 * h
        cx, cy = im.width / 2, h / 2
        ImageDraw.Draw(im).ellipse([cx - r, cy - r, cx + r, cy + r], fill="#BC002D")
        return im
    if name == "Switzerland":  # square; on a 32-unit grid the cross spans 6..26, arms 6 wide
        h = FLAG_HEIGHT
        u = h / 32
        im = Image.new("RGB", (h, h), "#DA291C")
        d = ImageDraw.Draw(im)
        d.rectangle([round(13 * u), round(6 * u), round(19 * u) - 1, round(26 * u) - 1], fill=W)
        d.rectangle([round(6 * u), round(13 * u), round(26 * u) - 1, round(19 * u) - 1], fill=W)
        return im
    if name == "Denmark":  # 12-4-21 by 12-4-12
        return _nordic([12, 4, 21], [12, 4, 12], "#C8102E", W)
    if name == "Sweden":  # 5-2-9 by 4-2-4
        return _nordic([5, 2, 9], [4, 2, 4], "#006AA7", "#FECC00")
    if name == "Finland":  # 5-3-10 by 4-3-4
        return _nordic([5, 3, 10], [4, 3, 4], W, "#002F6C")
    if name == "Norway":  # 6-4-12 by 6-4-6: white cross 4 wide holding a blue cross 2 wide
        return _nordic([6, 4, 12], [6, 4, 6], "#BA0C2F", W, inner=("#00205B", 1))
    if name == "Czech Republic":  # white over red, blue triangle to half the length
        h = FLAG_HEIGHT
        im = _stripes((2, 3), [W, "#D7141A"], False)
        ImageDraw.Draw(im).polygon([(0, 0), (im.width / 2, h / 2), (0, h)], fill="#11457E")
        return im
    raise KeyError(name)


def perturb(im, seed: int):
    """A query view of an entity image: crop, rotate, colour shift, blur; never the same pixels."""
    from PIL import Image, ImageEnhance, ImageFilter

    rng = random.Random(seed)
    im = im.convert("RGB")
    w, h = im.size
    f = rng.uniform(0.78, 0.9)
    cw, ch = int(w * f), int(h * f)
    x, y = rng.randint(0, w - cw), rng.randint(0, h - ch)
    im = im.crop((x, y, x + cw, y + ch))
    angle = rng.choice([-1, 1]) * rng.uniform(4, 9)
    im = im.rotate(angle, resample=Image.BICUBIC, expand=True, fillcolor=(rng.randint(90, 200),) * 3)
    im = ImageEnhance.Brightness(im).enhance(rng.uniform(0.8, 1.15))
    im = ImageEnhance.Color(im).enhance(rng.uniform(0.75, 1.25))
    im = im.filter(ImageFilter.GaussianBlur(rng.uniform(0.6, 1.2)))
    target = rng.randint(300, 380)
    im = im.resize((target, max(8, round(im.height * target / im.width))), Image.LANCZOS)
    return im


# --------------------------------------------------------------------------- questions
# id | image (query file stem or "") | question | path (head>PID>tail; …) — labels or QIDs.
# The answer is the tail of the last edge; the topic the head of the first.
QUESTIONS = """
q01|eileen_collins|In which city was the astronaut in this photo born?|Eileen Collins>P19>Elmira
q02|eileen_collins|In which U.S. state was the astronaut shown here born?|Eileen Collins>P19>Elmira;Elmira>P131>New York
q03|eileen_collins|What is the capital of the state where the astronaut in this photo was born?|Eileen Collins>P19>Elmira;Elmira>P131>New York;New York>P36>Albany
q04|falcon9_dscovr_launch|Which company manufactured the rocket in this launch photo?|Falcon 9>P176>SpaceX
q05|falcon9_dscovr_launch|Who founded the company that builds the rocket shown in this photo?|Falcon 9>P176>SpaceX;SpaceX>P112>Elon Musk
q06|falcon9_dscovr_launch|In which city was the founder of the company that builds the rocket in this picture born?|Falcon 9>P176>SpaceX;SpaceX>P112>Elon Musk;Elon Musk>P19>Pretoria
q07|flag_france|Which city is twinned with the capital of the country whose flag is shown?|France>P36>Paris;Paris>P190>Rome
q08|flag_japan|In which country is the city that is twinned with the capital of the country whose flag this is?|Japan>P36>Tokyo;Tokyo>P190>New York City;New York City>P17>United States
q09|flag_romania|What is the capital of the country whose flag is shown?|Romania>P36>Bucharest
q10|flag_ireland|What is the capital of the country that shares a land border with the country whose flag is shown?|Ireland>P47>United Kingdom;United Kingdom>P36>London
q11|flag_italy|What is an official language of the country whose flag is shown?|Italy>P37>Italian
q12|flag_switzerland|Which currency is used in the country whose flag is pictured here?|Switzerland>P38>Swiss franc
q13|moon_surface|Around which star does the planet orbited by the body in this photo revolve?|Moon>P397>Earth;Earth>P397>Sun
q14|hubble_xdf|In which constellation is the patch of sky shown in this image?|Hubble eXtreme Deep Field>P59>Fornax
q15|flag_poland|What is the currency of the country whose flag is shown?|Poland>P38>Polish złoty
q16|flag_germany|Which country has as its capital the city twinned with the capital of the country whose flag is shown?|Germany>P36>Berlin;Berlin>P190>Paris;Paris>P1376>France
q17||Where was the architect of the Eiffel Tower born?|Eiffel Tower>P84>Stephen Sauvestre;Stephen Sauvestre>P19>Paris
q18||In which country did the architect of the Flatiron Building die?|Flatiron Building>P84>Daniel Burnham;Daniel Burnham>P20>Heidelberg;Heidelberg>P17>Germany
q19||In which country was the architect of the Guggenheim Museum Bilbao born?|Guggenheim Museum Bilbao>P84>Frank Gehry;Frank Gehry>P19>Toronto;Toronto>P17>Canada
q20||Who designed the Sydney Opera House?|Sydney Opera House>P84>Jørn Utzon
q21||In which city is the museum that holds the Mona Lisa?|Mona Lisa>P276>Louvre;Louvre>P131>Paris
q22||In which city was the father of Wolfgang Amadeus Mozart born?|Wolfgang Amadeus Mozart>P22>Leopold Mozart;Leopold Mozart>P19>Augsburg
q23||Who wrote the novel Notre-Dame de Paris?|The Hunchback of Notre-Dame>P50>Victor Hugo
q24||In which town was the sculptor of the Statue of Liberty born?|Statue of Liberty>P170>Frédéric Auguste Bartholdi;Frédéric Auguste Bartholdi>P19>Colmar
q25||Where was Michael Collins, the Apollo 11 astronaut, born?|Michael Collins>P19>Rome
""".strip()


# --------------------------------------------------------------------------- build
# A label shared by look-alike entities means this one in FACTS/QUESTIONS; the others by QID.
PREFERRED = {"Paris": "Q90"}

def _rows(block):
    for line in block.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            yield [c.strip() for c in line.split("|")]


def parse():
    relations = {}
    for pid, label, aliases in _rows(RELATIONS):
        assert pid not in relations, f"duplicate relation {pid}"
        relations[pid] = (label, [a for a in aliases.split(";") if a])
    entities = {}
    for qid, label, aliases, desc, conf in _rows(ENTITIES):
        assert qid not in entities, f"duplicate entity {qid}"
        entities[qid] = dict(label=label, aliases=[a for a in aliases.split(";") if a], desc=desc,
                             uncertain=conf == "?")
    by_label: dict[str, list[str]] = {}
    for qid, e in entities.items():
        by_label.setdefault(e["label"], []).append(qid)

    def resolve(x):
        if x in entities:
            return x
        ids = by_label.get(x, [])
        if len(ids) > 1 and x in PREFERRED:
            return PREFERRED[x]
        if len(ids) != 1:
            raise SystemExit(f"cannot resolve {x!r}: {ids or 'no such label'}")
        return ids[0]

    facts, seen = [], set()
    for h, p, t in _rows(FACTS):
        assert p in relations, p
        tri = (resolve(h), p, resolve(t))
        if tri in seen:
            raise SystemExit(f"duplicate fact {h}|{p}|{t}")
        seen.add(tri)
        facts.append(tri)
    return relations, entities, facts, resolve


def build() -> None:
    import json

    import numpy as np
    from PIL import Image
    import skimage.data

    relations, entities, facts, resolve = parse()
    used = {e for h, _, t in facts for e in (h, t)}
    unused = sorted(set(entities) - used)
    if unused:
        raise SystemExit(f"entities without facts: {unused}")

    def tsv(name, rows):
        with open(HERE / name, "w", encoding="utf-8", newline="\n") as fh:
            for r in rows:
                fh.write("\t".join(r) + "\n")

    tsv("wikidata5m_relation.txt", ([pid, lab, *al] for pid, (lab, al) in relations.items()))
    tsv("wikidata5m_entity.txt", ([q, e["label"], *e["aliases"]] for q, e in entities.items()))
    tsv("wikidata5m_text.txt", ([q, f"{e['label']}, {e['desc']}."] for q, e in entities.items()))

    # questions first: their gold edges stay in the train split
    qrows, gold = [], set()
    for qid_, stem, text, path in _rows(QUESTIONS):
        edges = []
        for edge in path.split(";"):
            h, p, t = edge.split(">")
            tri = (resolve(h), p, resolve(t))
            if tri not in set(facts):
                raise SystemExit(f"{qid_}: gold edge {edge} is not a fact")
            edges.append(list(tri))
            gold.add(tri)
        ans = entities[edges[-1][2]]
        topic = edges[0][0]
        row = {"id": qid_}
        if stem:
            row["image"] = f"queries/{stem}.jpg"
        row.update(question=text, answer=ans["label"], answer_id=edges[-1][2], aliases=ans["aliases"],
                   hops=len(edges), topic={"id": topic, "label": entities[topic]["label"]}, path=edges)
        qrows.append(row)
    with open(HERE / "questions.jsonl", "w", encoding="utf-8", newline="\n") as fh:
        for r in qrows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")

    # transductive split: valid/test hold a few facts whose entities also occur in train
    rng = random.Random(5)
    order = list(range(len(facts)))
    rng.shuffle(order)
    held: dict[str, list] = {"valid": [], "test": []}
    train_idx = set(range(len(facts)))
    for i in order:
        tri = facts[i]
        if tri in gold:
            continue
        rest = [facts[j] for j in train_idx if j != i]
        ents = {e for h, _, t in rest for e in (h, t)}
        if tri[0] in ents and tri[2] in ents:
            split = "valid" if len(held["valid"]) <= len(held["test"]) else "test"
            held[split].append(tri)
            train_idx.discard(i)
            if len(held["valid"]) + len(held["test"]) >= 30:
                break
    tsv("wikidata5m_transductive_train.txt", (list(facts[i]) for i in sorted(train_idx)))
    tsv("wikidata5m_transductive_valid.txt", (list(t) for t in held["valid"]))
    tsv("wikidata5m_transductive_test.txt", (list(t) for t in held["test"]))

    # images
    (HERE / "images").mkdir(exist_ok=True)
    (HERE / "queries").mkdir(exist_ok=True)
    links = []
    for fn, (qid, stem) in PHOTOS.items():
        arr = getattr(skimage.data, fn)()
        im = Image.fromarray(arr if arr.dtype == np.uint8 else (arr * 255).astype(np.uint8)).convert("RGB")
        if max(im.size) > 512:
            im.thumbnail((512, 512), Image.LANCZOS)
        im.save(HERE / "images" / f"{stem}.jpg", quality=88)
        links.append((qid, f"images/{stem}.jpg", stem, im))
    for name, qid in FLAGS.items():
        stem = "flag_" + name.lower().replace(" ", "_")
        im = draw_flag(name)
        im.save(HERE / "images" / f"{stem}.png", optimize=True)
        links.append((qid, f"images/{stem}.png", stem, im))
    for qid, rel, stem, im in links:
        assert qid in entities, qid
        seed = sum(ord(c) for c in stem)
        perturb(im, seed).save(HERE / "queries" / f"{stem}.jpg", quality=rng.randint(55, 75))
    tsv("entity_images.tsv", ([q, rel] for q, rel, _, _ in links))

    n_unc = sum(e["uncertain"] for e in entities.values())
    print(f"{len(entities)} entities ({n_unc} with uncertain QIDs), {len(relations)} relations, "
          f"{len(facts)} facts (train {len(train_idx)}, valid {len(held['valid'])}, test {len(held['test'])}), "
          f"{len(links)} entity images, {len(qrows)} questions")


if __name__ == "__main__":
    if "--uncertain" in sys.argv:  # for README.md: the QIDs not known for certain
        _, ents, _, _ = parse()
        for q, e in ents.items():
            if e["uncertain"]:
                print(f"{q} {e['label']}")
    else:
        build()
