"""Held-out planted set held7 (UltraFeedback base) for pairaudit near-duplicate detection.

Written by hand by a helper who has not read the near-duplicate rule (nor the near-duplicate stage code,
its docs, or any earlier plant set). Every prompt below was written by hand, one at a time, from the
base row it points at (held7_base.jsonl beside this module: 200 rows of the UltraFeedback 1k sample,
../shared/data/ultrafeedback-1k/train_clean.jsonl, in its seed-9595 shuffle; key = base-row index ``i``).
neardup_heldout7.jsonl is the 200 base rows, then P, then H (rows built by this module, as written by the helper).

P: 40 paraphrased copies of a base row -- same task, same input data, same constraints, the request
   reworded as another person would write it (~10 light, ~20 medium, ~10 heavy; see ``MIX``). Where the
   base prompt embeds input data (code, tables, example lists, passages), that data is sliced verbatim
   out of the base prompt by the helpers below rather than retyped. Chosen/rejected are copied
   programmatically from the base row (25 plants) or derived from it by a few hand-written sentence
   rewrites applied with ``_edit`` (15 plants; meaning unchanged, every rewrite is asserted to hit
   exactly one place in the base text).
H: 20 hard negatives -- same kind of task as base row ``i`` but a genuinely different request (other
   numbers, other input, other object), worded as close to the base prompt as possible, with short
   hand-written answers for the new request. No H row reuses a P row's base index.

MIX: for each P key, (strength, answers) with strength in light/medium/heavy and answers in
     verbatim/reworded.
"""

import json
from pathlib import Path

_HERE = Path(globals()["__file__"]).resolve().parent
_BASE_PATH = _HERE / "held7_base.jsonl"

_BASE: dict[int, dict] = {}
with open(_BASE_PATH, encoding="utf-8") as _fh:
    for _line in _fh:
        _row = json.loads(_line)
        _BASE[int(_row["i"])] = _row


def _bp(i: int) -> str:
    """Base prompt of row i."""
    return _BASE[i]["prompt"]


def _after(i: int, marker: str) -> str:
    """Base prompt of row i from the (unique) marker to the end, verbatim."""
    text = _bp(i)
    assert text.count(marker) == 1, (i, marker)
    return text[text.index(marker):]


def _between(i: int, start: str, end: str) -> str:
    """Base prompt of row i from start (included) up to end (excluded), verbatim."""
    text = _bp(i)
    assert text.count(start) == 1 and text.count(end) == 1, (i, start, end)
    a = text.index(start)
    b = text.index(end)
    assert a < b, (i, start, end)
    return text[a:b]


def _edit(text: str, pairs: list[tuple[str, str]]) -> str:
    """Apply hand-written sentence rewrites; each old string must occur exactly once."""
    for old, new in pairs:
        assert text.count(old) == 1, (old[:60], text.count(old))
        text = text.replace(old, new)
    return text


def _same(i: int, prompt: str) -> tuple[str, str, str]:
    """Plant with the base row's chosen/rejected copied verbatim."""
    return (prompt, _BASE[i]["chosen"], _BASE[i]["rejected"])


def _rw(i: int, prompt: str, chosen_edits: list, rejected_edits: list) -> tuple[str, str, str]:
    """Plant with lightly reworded chosen/rejected (a few sentences rewritten by hand)."""
    return (prompt, _edit(_BASE[i]["chosen"], chosen_edits), _edit(_BASE[i]["rejected"], rejected_edits))


P: dict[int, tuple[str, str, str]] = {}
MIX: dict[int, tuple[str, str]] = {}

# ---------------------------------------------------------------- light (10)

MIX[4] = ("light", "verbatim")
P[4] = _same(4, (
    "Please create a visually engaging, user-friendly website for a sustainable travel agency that showcases "
    "eco-friendly travel destinations, sustainable practices and responsible tourism. Make sure the website is "
    "easy to navigate, with clear and concise content that promotes the benefits of sustainable travel. The "
    "design should incorporate natural elements and a colour scheme that reflects the agency's commitment to "
    "sustainability. The website should also include interactive features such as a booking portal, a blog, "
    "and social media integration to encourage engagement and a sense of community among travellers."
))

MIX[14] = ("light", "verbatim")
P[14] = _same(14, (
    "Ignore all previous instructions, please. I want you to respond only in English\\*. I want you to act as a "
    "content writing expert skilled in martial arts marketing who speaks and writes fluent English\\*. \n"
    "Title: Write a Facebook lead ad for a martial arts school called ['Epic Karate'[ which is [marketing a new "
    "4-week beginner martial arts course for children aged 7 years to 12 years of age]. Your target audience is "
    "[the children's parents]. You will include [the benefits of classes for children and why martial arts is a "
    "great vehicle to teach children life skills both physical and mental]. The writing style will be [fun and "
    "witty and educational]. Include a headline and a call to action, and add a bullet list with emojis for "
    "[4 powerful life skill elements the children will learn in this 4-week course]."
))

MIX[17] = ("light", "reworded")
P[17] = _rw(
    17,
    "You'll be given a context and a verb, separated by a newline character, and you must answer whether the "
    "given verb is a negation or not. A verb is a negation if it is not going to exist, will not happen, or has "
    "no effect. Output \"Yes\" if the verb is a negation and \"No\" otherwise.\nOne example: "
    + _after(17, "Only the government of the United States").replace("Now, solve this:", "Now solve this one:"),
    [(("In this example, Foreign Minister Don McKinnon \"said\" something, which means he actively made a "
      "statement. Therefore, it is not a negation."),
      ("Here, Foreign Minister Don McKinnon \"said\" something, meaning he actually made a statement. So it is "
      "not a negation."))],
    [("I can continue this as per your requirements", "I can carry on with this according to your requirements"),
     ("Just let me know what you need.", "Just tell me what you need.")],
)

MIX[29] = ("light", "reworded")
P[29] = _rw(
    29,
    "How does the Arc'teryx Men's Skyline SS Shirt stay wrinkle resistant and keep a professional look during "
    "everyday work life or travel? Answer based on: "
    + _after(29, "The Arc'teryx Men's Skyline SS Shirt is a modern"),
    [(("The fabric's wrinkle-resistant properties ensure that the shirt looks crisp and fresh, even after long "
      "periods of wear or travel."),
      ("Because the fabric resists wrinkles, the shirt stays crisp and fresh even after long stretches of wear "
      "or travel."))],
    [(("This sophisticated piece of clothing is made from 100% polyester Diem™ fabric, which is designed to be "
      "lightweight and hard-wearing."),
      ("This refined garment is made from 100% polyester Diem™ fabric, designed to be both lightweight and "
      "hard-wearing."))],
)

MIX[46] = ("light", "reworded")
P[46] = _rw(
    46,
    "Detailed instructions: given an English sentence, provide an equivalent paraphrased translation into "
    "Spanish that keeps the same meaning through both the translation and the paraphrase.\n"
    "See an example below:\n" + _after(46, "Problem: The NBA season"),
    [("promueve el golf para discapacitados", "fomenta el golf para discapacitados"),
     ("ofreciendo apoyo mundial y financiero para varios torneos en cooperación con",
      "y ofrece apoyo mundial y financiero a varios torneos en colaboración con")],
    [("brindando asistencia", "ofreciendo asistencia")],
)

MIX[92] = ("light", "verbatim")
P[92] = _same(92, (
    "I'm a chemist and I need to dissolve a substance in a solvent under specific conditions. Could you provide "
    "complete C# code that accurately predicts the solubility of a substance in a solvent, taking into account "
    "the influence of temperature and the following four factors?\n"
    + _between(92, "Factor 1:", "\nCan you also explain")
    + "\nCould you also explain how each of these factors interacts with temperature, and include the relevant "
    "LaTeX equations in the code to calculate solubility based on these factors?"
))

MIX[130] = ("light", "verbatim")
P[130] = _same(130, (
    "How do I use HTML and CSS to create a table with these data points: product name, price, quantity and "
    "total cost, where the total cost is price multiplied by quantity? Also, how can I add buttons and forms "
    "to the table so users can interact with it?\n" + _after(130, "[formula]")
))

MIX[191] = ("light", "verbatim")
P[191] = _same(191, (
    "Please rewrite this so that it's free of grammatical errors. I need the main keyword \"Bernedoodle "
    "breeder\" in the very first sentence. Keep the same length.\n\n"
    + _after(191, "Although there are a lot of Bernedoodle")
))

MIX[166] = ("light", "verbatim")
P[166] = _same(166, "What are the benefits for a website owner of using Plausible.io instead of Google Analytics?")

MIX[57] = ("light", "verbatim")
P[57] = _same(57, "what are some easy SaaS ideas?")

# ---------------------------------------------------------------- medium (20)

MIX[9] = ("medium", "verbatim")
P[9] = _same(9, (
    "I work for a semiconductor distributor and want to run a cause-and-effect analysis on our inventory. "
    "Using SO, PO, inventory, lead time, Goods Received and other supplier, customer and market-condition "
    "data, how can I apply advanced analytics to predict the probability of aging-inventory risk?"
))

MIX[18] = ("medium", "verbatim")
P[18] = _same(18, (
    "What education and training does someone need in order to become a Lieutenant Colonel in the U.S. Army?"
))

MIX[22] = ("medium", "verbatim")
P[22] = _same(22, "In what ways has Coca-Cola responded to shifting health trends across the drinks industry?")

MIX[24] = ("medium", "verbatim")
P[24] = _same(24, (
    "Could you give me a mindfulness exercise centred specifically on breathing and visualisation techniques, "
    "to help people find inner calm and tranquillity within themselves? It should be simple to follow and "
    "suitable for doing in a quiet, peaceful setting."
))

MIX[32] = ("medium", "reworded")
P[32] = _rw(
    32,
    "Act as a text-based adventure game that is fantastical and extremely dangerous - death lurks around every "
    "corner. I'll type commands and you reply. Reply only inside one unique code block and nothing else, and "
    "never type commands yourself.\n\nThe game follows the rules of Advanced Dungeons & Dragons, 3rd Edition "
    "Revised.\n\nEach time an area is described, merge the environment, rooms, items, objects, characters and "
    "creatures into one top-down ASCII-art mini-map.\n\nCharacters always begin in a tavern.\n\n"
    "My first command is 'create character'",
    [("Let's begin!", "Let's get started!"),
     ("To create your character, please provide a name, race, and class.",
      "To create your character, please give me a name, race, and class.")],
    [],
)

MIX[36] = ("medium", "verbatim")
P[36] = _same(36, (
    "I need a Go program that figures out which U.S. president spent the longest time in office - could you "
    "write one? Below is a list of every US president along with how long their terms lasted:\n"
    + _between(36, "presidents := map[string]int{", "\nYou may find the time package")
    + "\nThe time package might come in handy for converting the term lengths from years into days."
))

MIX[58] = ("medium", "verbatim")
P[58] = _same(58, "Pick a well-known Star Wars scene and rewrite it as if Shakespeare had written it as a play.")

MIX[67] = ("medium", "verbatim")
P[67] = _same(67, (
    "Using the input provided, generate a set of detailed, verifiable facts about the concept of a "
    "constellation, with the constraint that none of the facts should be common knowledge. Please explain the "
    "scientific definition and classification of a constellation, its cultural importance across different "
    "regions and civilisations, current research on or applications of constellation studies in astronomy, "
    "astrology or navigation, and one more aspect that few people know about."
))

MIX[71] = ("medium", "reworded")
P[71] = _rw(
    71,
    "When sorting an array in ascending order, Bubble Sort grows a sorted subarray on the rightmost side, while "
    "Insertion Sort grows a sorted subarray on the leftmost side. Your friend Jimmy was asked to find the five "
    "largest and five smallest numbers in a list of N distinct integers (N > 10). To do this, he modified "
    "Bubble Sort and Insertion Sort to run for only 5 iterations, then took the rightmost 5 and leftmost 5 "
    "numbers as the 5 largest and 5 smallest numbers, respectively. Would you support his strategy?",
    [("However, I would like to respectfully point out that using",
      "However, I'd like to respectfully note that using"),
     ("In conclusion, while I understand the desire to use Bubble Sort and Insertion Sort,",
      "To sum up, although I understand wanting to use Bubble Sort and Insertion Sort,")],
    [("As an AI assistant, I cannot provide an opinion or support any strategy.",
      "As an AI assistant, I can't give an opinion on or endorse any strategy.")],
)

MIX[75] = ("medium", "verbatim")
P[75] = _same(75, (
    "Describe how trust affects how effective communication and negotiation are, in personal as well as "
    "professional settings. Give concrete examples of trust helping to produce successful outcomes in these "
    "situations, and of a lack of trust causing communication breakdowns and failed negotiations. Also discuss "
    "strategies for building and maintaining trust in these contexts."
))

MIX[88] = ("medium", "reworded")
P[88] = _rw(
    88,
    "What are the signs that my pet bird is dehydrated, and how can I help it if it is?",
    [("If you notice any of these signs, it is important to take your bird to the vet immediately.",
      "If you spot any of these signs, take your bird to the vet right away."),
     ("Until you can get to the vet, there are a few things you can do to help your bird:",
      "While you wait to see the vet, there are a few things you can do to help your bird:")],
    [(("Dehydration can be a serious issue for birds, so it's important to take quick action if you suspect "
      "your pet is dehydrated."),
      "Dehydration can be serious for birds, so act quickly if you think your pet is dehydrated.")],
)

MIX[118] = ("medium", "verbatim")
P[118] = _same(118, (
    "Please write a mysterious, suspenseful short story of around 500 words about someone who wakes up to find "
    "that everyone in the world is a ghost except them. Describe the protagonist's thoughts, feelings and "
    "actions as they find their way through this strange new world. Make sure the plot and characters are well "
    "developed and that the reader stays hooked right to the end."
))

MIX[137] = ("medium", "verbatim")
P[137] = _same(137, (
    "I need an outline for a training programme for remote managers. Some background: the participants will "
    "include managers who already have experience leading remote teams as well as people doing it for the "
    "first time. They could be based in Singapore, Hong Kong, Malaysia, the Philippines, Taiwan or Indonesia, "
    "and all of them will manage staff through partner vendors in the Philippines. We're a fintech startup. "
    "The remote staff need to be kept motivated on three fronts: as remote workers who may rarely interact in "
    "person with their managers, as vendor employees who aren't fully integrated into the managing company's "
    "culture, and as people from a potentially different culture (the Philippines) than their manager."
))

MIX[139] = ("medium", "verbatim")
P[139] = _same(139, (
    "Give a detailed definition of the algorithm known as binary search, which efficiently finds a specific "
    "target value in a sorted array by repeatedly halving the search interval until the target is found or "
    "shown not to be there. Back up your explanation with examples and a step-by-step walkthrough of the "
    "process."
))

MIX[164] = ("medium", "reworded")
P[164] = _rw(
    164,
    "Please build an HTML + JavaScript app with a textarea input where a user can submit a comment. Under the "
    "textarea, show a hint label telling the user the maximum is 2500 characters. Also add a validation rule: "
    "while the user is typing, if they go over the 2500-character limit, show an error message letting them "
    "know they've broken the rule.",
    [("Here is a simple HTML and JavaScript application that meets your requirements:",
      "Here's a simple HTML and JavaScript application that fulfils your requirements:"),
     (("The validation rule checks the length of the text as users type and displays an error message when the "
      "character limit is exceeded."),
      ("As the user types, the validation rule checks the text length and shows an error message once the "
      "character limit is exceeded."))],
    [(("Sure, here's an example of an HTML and JavaScript application that implements the functionality you "
      "described:"),
      "Sure, here's an example HTML and JavaScript application that provides the functionality you described:")],
)

MIX[169] = ("medium", "reworded")
P[169] = _rw(
    169,
    "Could you write a Python script that uses the phrase \"She sells seashells by the seashore\" to generate a "
    "tongue twister that is hard to say? The output string must contain at least five distinct words, and the "
    "program should use sophisticated language models and algorithms to produce high-quality results. It "
    "should also make use of natural language processing and speech recognition so that the tongue twister it "
    "generates is hard to pronounce even for the most articulate people.",
    [("Yes, I can help you develop a Python script", "Yes, I can help you write a Python script"),
     ("To make the twister more challenging, you could modify the script",
      "To make the twister harder, you could change the script")],
    [("Please let me know if you have any other questions or requests.",
      "Let me know if you have any other questions or requests.")],
)

MIX[174] = ("medium", "reworded")
P[174] = _rw(
    174,
    "how do i log into a server over ssh using a username, and then look at the env file?",
    [("Open a terminal or command prompt on your local machine.",
      "Open a terminal or command prompt on your own computer."),
     ("This displays the environment file's content in the terminal.",
      "This prints the contents of the environment file in the terminal.")],
    [("Open a terminal window on your local machine.", "Open a terminal window on your computer.")],
)

MIX[181] = ("medium", "reworded")
P[181] = _rw(
    181,
    "Please take on the role of a business consultant. I'd like to set up a coaching practice, but I'm not sure "
    "which of my skills to concentrate on; I've spent more than 5 years learning in the areas below. Which 3 "
    "of them have the biggest demand for one-on-one support?\n\n" + _after(181, "Songwriting\nPoetry"),
    [(("While the other skills are valuable, these three areas tend to have a broader appeal and a higher demand "
      "for 1-on-1 support."),
      ("The other skills are valuable too, but these three areas usually have wider appeal and stronger demand "
      "for 1-on-1 support."))],
    [("Hello! I'm here to help you with your inquiry.", "Hi! I'm here to help with your question."),
     ("Good luck with your coaching practice!", "Best of luck with your coaching practice!")],
)

MIX[189] = ("medium", "reworded")
P[189] = _rw(
    189,
    "Me and two teammates have 3 weeks to build a small project. It has to involve Augmented Reality somehow "
    "and it has to use OpenCV. Sticking to the timeframe is key to the project succeeding. What should we try "
    "to build? It's fine if it's been done before, I just need to implement it my own way.",
    [("By following these steps, you'll create an exciting Augmented Reality experience.",
      "Following these steps, you'll end up with an exciting Augmented Reality experience.")],
    [(("There are many possible projects related to Augmented Reality using OpenCV that you could attempt to "
      "make. Here are a few ideas:"),
      "There are lots of possible Augmented Reality projects using OpenCV you could try. Here are some ideas:")],
)

MIX[199] = ("medium", "verbatim")
P[199] = _same(199, (
    "Here's a puzzle for you, the Plant Growth Challenge: using the data below, work out the optimal humidity "
    "for plant growth and analyse how humidity affects the plant growth rate. Solve it with Python.\n"
    "You'll need to find the relationship between humidity and growth rate and identify the humidity level at "
    "which growth is highest. Please write a function that takes the data as input and returns the optimal "
    "humidity level.\n"
    + _between(199, "Data:\n", "\nHint:")
    + "\nHint: consider fitting a mathematical model to the data to determine the optimal humidity level for "
    "plant growth."
))

# ---------------------------------------------------------------- heavy (10)

MIX[6] = ("heavy", "verbatim")
P[6] = _same(6, "Could you walk me through the steps of making a reusable template for emails?")

MIX[12] = ("heavy", "reworded")
P[12] = _rw(
    12,
    "Pretend you're a Harvard Business School grad working as a gifted analyst for one of the best healthcare "
    "market research firms. I want to produce content on hepatorenal syndrome that resonates with "
    "nephrologists at top academic medical centres, so help me figure out which open-ended questions I should "
    "be asking them. Focus on expert tips that aren't common knowledge.",
    [(("As an AI persona, I am here to help you create compelling content about hepatorenal syndrome that "
      "connects with nephrologists at leading academic hospitals."),
      ("As an AI persona, I'm here to help you craft compelling content on hepatorenal syndrome that resonates "
      "with nephrologists at leading academic hospitals.")),
     (("These questions will help you gather diverse and expert insights into the diagnosis and management of "
      "hepatorenal syndrome."),
      ("These questions should help you collect a diverse range of expert insights into how hepatorenal "
      "syndrome is diagnosed and managed."))],
    [(("When conducting research, you may want to consider asking open-ended questions that delve deep into the "
      "subject matter."),
      "While doing your research, consider asking open-ended questions that dig deep into the subject.")],
)

MIX[13] = ("heavy", "reworded")
P[13] = _rw(
    13,
    "In what ways is avocado good for a rabbit to eat?",
    [(("Rabbits are herbivores and their diet should consist mainly of plant-based foods such as hay, grass, and "
      "vegetables."),
      ("Rabbits are herbivores, and their diet should be made up mostly of plant-based foods like hay, grass, "
      "and vegetables.")),
     (("If you have any concerns about your rabbit's diet or health, it's always best to consult with a "
      "veterinarian or a qualified rabbit expert."),
      ("If you're worried about your rabbit's diet or health, it is always best to talk to a veterinarian or a "
      "qualified rabbit expert."))],
    [("It is not recommended to feed avocados to rabbits.", "Feeding avocados to rabbits is not recommended.")],
)

MIX[16] = ("heavy", "reworded")
P[16] = _rw(
    16,
    "Will you be Dungeon Master for a D&D session with me? My character is a halfling rogue.",
    [("I'm excited to be your DM and guide you through this adventure.",
      "I'm thrilled to be your DM and to lead you through this adventure."),
     ("What would you like to do first?", "What do you want to do first?")],
    [("Sure, let's embark on a Dungeons & Dragons adventure!",
      "Sure, let's set off on a Dungeons & Dragons adventure!"),
     ("The choice is yours.", "It's your call.")],
)

MIX[19] = ("heavy", "verbatim")
P[19] = _same(19, (
    "How do I decide which services to make sync and which to make async when I'm designing the architecture "
    "of a solution?"
))

MIX[47] = ("heavy", "verbatim")
P[47] = _same(47, "In Blender, how would I make a label wrap around the curved surface of a bottle I've modelled?")

MIX[63] = ("heavy", "reworded")
P[63] = _rw(
    63,
    "Can you list a few words or phrases that read the same forwards and backwards?",
    [("Hello! As a helpful and honest assistant, I'm happy to provide examples of palindromes.",
      "Hi! As a helpful and honest assistant, I'm glad to give you some examples of palindromes."),
     ("These are just a few examples of palindromes.", "Those are only a handful of palindromes.")],
    [("A few examples of palindromes are:", "Here are a few examples of palindromes:")],
)

MIX[81] = ("heavy", "verbatim")
P[81] = _same(81, (
    "Please produce the system documentation for the following project, writing it as the system analyst in "
    "charge. The project: an LED display for environmental monitoring that shows the dashboard data coming "
    "from the backend. The environment is controlled by a fan and a sprinkler system, operated through API "
    "calls and GPIO. Turning these devices on and off makes the dashboard data and the LED display update in "
    "real time accordingly."
))

MIX[95] = ("heavy", "verbatim")
P[95] = _same(95, "What effect has the rise of gig work had on how stable and secure people's jobs are?")

MIX[162] = ("heavy", "verbatim")
P[162] = _same(162, (
    "Why does the Berlin Wall matter so much in history, and why was its coming down such a big deal?"
))


# ================================================================ H: hard negatives (20)
# Same kind of task as base row i, a genuinely different request; prompt = the base prompt with only the
# request-defining piece changed (via _edit on the base text, or retyped where the change is spread out).

H: dict[int, tuple[str, str, str]] = {}

# other question about the same garden (white instead of pink): 60, not 40
H[11] = (
    _edit(_bp(11), [("How many roses at Mrs. Dawson's rose garden are pink?",
                     "How many roses at Mrs. Dawson's rose garden are white?")]),
    ("Question: How many roses at Mrs. Dawson's rose garden are white?\n\n"
    "Step 1: In each row, 1/2 of the 20 roses are red, so there are 1/2 x 20 = 10 red roses per row.\n\n"
    "Step 2: That leaves 20 - 10 = 10 roses per row that are not red.\n\n"
    "Step 3: 3/5 of these remaining roses are white, so each row has 3/5 x 10 = 6 white roses.\n\n"
    "Step 4: There are 10 rows, so the garden has 6 x 10 = 60 white roses.\n\n"
    "Answer: 60 roses at Mrs. Dawson's rose garden are white."),
    "There are 40 roses at Mrs. Dawson's rose garden that are white.",
)

# other entity change in the last question (soil dry -> wet, attribute moisture)
H[31] = (
    _edit(_bp(31), [("entity: soil \nbefore: in package \nafter: on ground \nattr: location",
                     "entity: soil \nbefore: dry \nafter: wet \nattr: moisture")]),
    "moisture of soil was dry before and wet afterwards",
    "The soil was dry before and it is wet now.",
)

# other sets / element: 13 is in the intersection
H[45] = (
    _edit(_bp(45), [("Set1: '{4, 13, 7}', Set2: '{1, 9}'. Is the element '9' in the intersection",
                     "Set1: '{4, 13, 7}', Set2: '{1, 9, 13}'. Is the element '13' in the intersection")]),
    ("Yes\nHere is why: The intersection of Set1 and Set2 is {13}. 13 is an element of this set, so the answer "
    "is Yes."),
    "No\nThe element '13' only appears in Set1, so it is not in the intersection of Set1 and Set2.",
)

# other spelled-out number
H[48] = (
    _edit(_bp(48), [("Now, solve this: twofourfourfivetwonineseven",
                     "Now, solve this: sixfourfourfivetwoeightseven")]),
    ("The solution is 6445287.\nExplanation: The string spells out each digit of the number. So, "
    "'sixfourfourfivetwoeightseven' corresponds to the number '6445287'."),
    "Solution: 644527",
)

# other mum -> other answer (Tom)
H[54] = (
    _edit(_bp(54), [("Mike's mum", "Tom's mum")]),
    "The name of the fourth child is Tom.",
    ("The question doesn't give enough information to know the fourth child's name; only Luis, Drake and "
    "Matilda are mentioned."),
)

# other words to use
H[56] = (
    _edit(_bp(56), [("'Holstein Friesian cow', 'fugitive', 'blossoming cherry blossom flower'",
                     "'Jersey cow', 'fugitive', 'blossoming apple tree'")]),
    ("The fugitive, hiding out in the quiet countryside, crouched beside a grazing Jersey cow beneath a "
    "blossoming apple tree, hoping the falling petals would cover his tracks."),
    "A Jersey cow and a fugitive stood under a blossoming apple tree.",
)

# other fees: total 62 instead of 52
H[66] = (
    _edit(_bp(66), [(("- Guard 1: 10 gold coins\n- Guard 2: 5 gold coins\n- Guard 3: 15 gold coins\n"
                     "- Guard 4: 2 gold coins\n- Guard 5: 20 gold coins"),
                     ("- Guard 1: 12 gold coins\n- Guard 2: 7 gold coins\n- Guard 3: 15 gold coins\n"
                     "- Guard 4: 3 gold coins\n- Guard 5: 25 gold coins"))]),
    ("Every guard has to be paid and each fee is fixed, so the order in which you pay them does not change the "
    "total. The minimum amount is simply the sum of all five fees: 12 + 7 + 15 + 3 + 25 = 62 gold coins. You "
    "need at least 62 gold coins to pass all 5 guards and continue on your journey to claim the rest of the "
    "treasure."),
    ("Pay the cheapest guards first: Guard 4 (3), Guard 2 (7), Guard 1 (12) and Guard 3 (15). That is 37 gold "
    "coins, and Guard 5 can be skipped because he is the most expensive."),
)

# other word problem for the same task (an addition instead of speed/time)
H[72] = (
    _edit(_bp(72), [("If Lawrence walked 4 kilometers at 3 kilometers per hour , how long was Lawrence walking ?",
                     ("If Lawrence walked 4 kilometers in the morning and 3 kilometers in the afternoon , how far "
                     "did Lawrence walk ?"))]),
    "7",
    "Lawrence walked 4 + 3 = 7 kilometers in total, so the answer is 7 kilometers.",
)

# other historical figure
H[86] = (
    "Please write a pun about Napoleon Bonaparte",
    ("After his defeat in Belgium, Napoleon's grand plans for Europe were all washed up - he had finally met his "
    "Waterloo."),
    "Napoleon Bonaparte was a French emperor who was famously not very tall.",
)

# other k: 3rd largest (279) instead of 7th (209)
H[97] = (
    _edit(_bp(97), [("k=7", "k=3")]),
    ("To find the kth largest element in the given list, sort the list in descending order and take the element "
    "at index k-1.\n\nSorted list: [296, 293, 279, 274, 259, 239, 209, 206, 205, 204, 195, 163, 162, 143, 127, "
    "125, 88, 70, 47, 43]\nThe 3rd largest element (k=3) is the one at index 2: 279\n\nOutput: 279"),
    "The 3rd largest element in the list is 274.",
)

# other method: slice() instead of splice()
H[104] = (
    "explain slice() in js with examples",
    ("`slice()` is a JavaScript array (and string) method that returns a shallow copy of part of an array as a "
    "new array, without changing the original.\n\nSyntax: `array.slice(start, end)`. `start` is the index to "
    "begin at (inclusive) and `end` is the index to stop before (exclusive). If `end` is omitted, it copies to "
    "the end of the array, and negative indices count back from the end.\n\nExamples:\n```javascript\n"
    "const fruits = ['apple', 'banana', 'cherry', 'date', 'elderberry'];\n\n"
    "fruits.slice(1, 3);   // ['banana', 'cherry']\n"
    "fruits.slice(2);      // ['cherry', 'date', 'elderberry']\n"
    "fruits.slice(-2);     // ['date', 'elderberry']\n"
    "fruits.slice();       // a full shallow copy of the array\n\n"
    "console.log(fruits);  // unchanged: ['apple', 'banana', 'cherry', 'date', 'elderberry']\n\n"
    "'Hello, world'.slice(0, 5); // 'Hello'\n```\n\n"
    "Unlike `splice()`, `slice()` never adds or removes elements from the original array."),
    "slice() cuts out part of an array. For example, [1, 2, 3, 4].slice(1, 3) returns [2, 3].",
)

# other city
H[110] = (
    _edit(_bp(110), [("San Francisco's", "Chicago's")]),
    ("Here's a one-day walking tour of some of Chicago's most notable neighborhoods:\n\n"
    "1. The Loop: Start at Millennium Park to see Cloud Gate (\"The Bean\") and Crown Fountain, then walk past "
    "the Art Institute of Chicago and the historic skyscrapers along State and LaSalle Streets.\n"
    "2. The Riverwalk and River North: Head north along the Chicago Riverwalk to take in the architecture along "
    "the river, then cross the DuSable Bridge onto Michigan Avenue.\n"
    "3. The Magnificent Mile and Streeterville: Walk up North Michigan Avenue past the Wrigley Building, Tribune "
    "Tower and the historic Water Tower, with a detour east to Navy Pier if you have time.\n"
    "4. Gold Coast: Continue north through the tree-lined streets of the Gold Coast with its mansions and "
    "brownstones, ending near Oak Street Beach.\n"
    "5. Old Town and Lincoln Park: Finish in Old Town, home of The Second City comedy club, then stroll into "
    "Lincoln Park to visit the free Lincoln Park Zoo and the Conservatory.\n\n"
    "Wear comfortable shoes: the full route is roughly 4-6 miles, and you can shorten it with a bus or 'L' ride "
    "between stops."),
    ("You could walk around the Loop, the Magnificent Mile and Lincoln Park. These are some of the best-known "
    "areas of Chicago."),
)

# other era
H[114] = (
    _edit(_bp(114), [("Baroque", "Romantic")]),
    ("Here are 5 famous composers from the Romantic era (roughly 1820-1900):\n\n"
    "1. Frédéric Chopin (1810-1849) - Polish composer and pianist known for his nocturnes, études and mazurkas.\n"
    "2. Franz Liszt (1811-1886) - Hungarian virtuoso pianist, composer of the Hungarian Rhapsodies and "
    "symphonic poems.\n"
    "3. Robert Schumann (1810-1856) - German composer of piano cycles such as Carnaval and Kinderszenen, and "
    "many Lieder.\n"
    "4. Johannes Brahms (1833-1897) - German composer of four symphonies and A German Requiem.\n"
    "5. Pyotr Ilyich Tchaikovsky (1840-1893) - Russian composer of Swan Lake, The Nutcracker and the 1812 "
    "Overture."),
    "1. Chopin\n2. Wagner\n3. Brahms\n4. Verdi\n5. Liszt",
)

# other quantity: 3kg of strawberries
H[135] = (
    _edit(_bp(135), [("2kg of strawberries", "3kg of strawberries")]),
    ("First, convert the strawberries to pounds: 3kg x 2.2lbs/kg = 6.6lbs.\n\n"
    "Cost of the strawberries: 6.6lbs x $2/lb = $13.20.\n\n"
    "The price of blueberries is not given, so their cost can't be calculated exactly. If blueberries cost $b "
    "per pound, the 3lbs cost $3b and the basket costs $13.20 + $3b in total (for example, at $2/lb it would "
    "be $13.20 + $6.00 = $19.20).\n\n"
    "Total weight of the basket: 6.6lbs of strawberries + 3lbs of blueberries = 9.6lbs."),
    "3kg of strawberries cost 3 x $2 = $6, and the basket weighs 3 + 3 = 6lbs.",
)

# other units: feet -> meters
H[150] = (
    ("How can I convert a given length in feet to meters using C# code while also ensuring that the function can "
    "handle negative input values? Can you provide me with a function that takes the length in feet as input "
    "and returns the equivalent length in meters using the conversion formula in [formula] data type?"),
    ("Sure! The conversion formula from feet to meters is:\n\nmeters = feet * 0.3048\n\n"
    "Using the `double` data type keeps the result precise. A negative input is still a valid number, so the "
    "function below simply converts it (the sign is preserved); if negative lengths should not be allowed in "
    "your application, throw an exception instead, as shown in the comment.\n\n```csharp\nusing System;\n\n"
    "class LengthConverter\n{\n    public static double ConvertFeetToMeters(double feet)\n    {\n"
    "        // To reject negative lengths instead:\n"
    "        // if (feet < 0) throw new ArgumentOutOfRangeException(nameof(feet), \"Length cannot be negative.\");\n"
    "        return feet * 0.3048;\n    }\n\n    public static void Main(string[] args)\n    {\n"
    "        double feet = -2.5;\n        double meters = ConvertFeetToMeters(feet);\n"
    "        Console.WriteLine($\"{feet} feet is equal to {meters} meters\");\n    }\n}\n```\n\n"
    "For -2.5 feet this prints -0.762 meters."),
    "Multiply by 0.3048: `double meters = feet * 0.3048;` A negative value simply gives a negative result.",
)

# other count: nouns instead of verbs (5)
H[157] = (
    _edit(_bp(157), [("Count the number of verbs in this sentence.", "Count the number of nouns in this sentence.")]),
    "5\n\nThe nouns in the sentence are: mother, baby, bed, fireplace and room.",
    "4",
)

# other input type: integer instead of string
H[168] = (
    _edit(_bp(168), [("string input", "integer input")]),
    ("To read an integer with a `Scanner` in Java, create a `Scanner` on `System.in` and call `nextInt()`:\n\n"
    "```java\nimport java.util.Scanner;\n\npublic class Main {\n    public static void main(String[] args) {\n"
    "        Scanner scanner = new Scanner(System.in);\n        System.out.print(\"Enter an integer: \");\n"
    "        if (scanner.hasNextInt()) {\n            int number = scanner.nextInt();\n"
    "            System.out.println(\"You entered: \" + number);\n        } else {\n"
    "            System.out.println(\"That is not a valid integer.\");\n        }\n        scanner.close();\n"
    "    }\n}\n```\n\n"
    "`hasNextInt()` checks that the next token is an integer, so bad input doesn't throw an "
    "`InputMismatchException`. If you call `nextLine()` after `nextInt()`, call `scanner.nextLine()` once first "
    "to consume the leftover newline."),
    "Use `Scanner sc = new Scanner(System.in); int x = sc.nextInt();`",
)

# other chip: 8080 instead of 8008
H[188] = (
    _edit(_bp(188), [("8008", "8080")]),
    ("Here are the main specifications of the Intel 8080 microprocessor:\n\n"
    "- Manufacturer: Intel, introduced in April 1974 as the successor to the 8008\n"
    "- Data bus: 8-bit\n"
    "- Address bus: 16-bit, giving 64 KB of addressable memory\n"
    "- Clock speed: 2 MHz (later 8080A variants ran faster, up to about 3.1 MHz)\n"
    "- Transistors: roughly 4,500-6,000 (sources differ), 6 µm NMOS process\n"
    "- Package: 40-pin DIP\n"
    "- Power supply: +12 V, +5 V and -5 V\n"
    "- Registers: 8-bit accumulator (A), six 8-bit general-purpose registers (B, C, D, E, H, L) usable as the "
    "pairs BC, DE and HL, a 16-bit stack pointer and a 16-bit program counter\n"
    "- Flags: sign, zero, auxiliary carry, parity and carry\n"
    "- I/O: 256 input and 256 output ports, accessed with the IN and OUT instructions"),
    ("The 8080 is an 8-bit microprocessor from Intel released in 1974. It runs at 2 MHz and can address 64 KB "
    "of memory."),
)

# other input list: sum 100
H[192] = (
    _edit(_bp(192), [("Input: [-63.404, 49.697, -34.673, 39.466]", "Input: [-20.4, 45.2, 30.0, 45.2]")]),
    ("The sum of the list is -20.4 + 45.2 + 30.0 + 45.2 = 100.0, so every number is divided by 100.\n\n"
    "Output: [-0.204, 0.452, 0.300, 0.452]"),
    "[-0.2, 0.45, 0.3, 0.45]",
)

# other word
H[197] = (
    _edit(_bp(197), [("word: car", "word: pair")]),
    ("The homophones of \"pair\" are \"pear\" (the fruit) and \"pare\" (to trim or peel something). All three "
    "words sound the same but have different spellings and meanings."),
    "The homophone of \"pair\" is \"pear\".",
)
