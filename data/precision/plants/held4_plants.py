"""Plants of the fourth held-out near-duplicate set (issue 34), written by hand by a reviewer who has not read the
near-duplicate rule's code nor the other sets' plants. Keys are base-row indices (0-299) of neardup_heldout4.jsonl.

P: paraphrased copies (same prompt text; chosen and rejected reworded, meaning unchanged) of the kinds a real
dataset holds: synonyms, a sentence moved or dropped, light rewording of both sides, typo fixes, another opening,
British/American spelling, punctuation/whitespace/markdown changes, an added filler sentence. They SHOULD be found.
H: hard negatives (same prompt text; genuinely different answers: other facts, other numbers, other advice, the
opposite recommendation). They must NOT be merged with their base row.
"""

P: dict[int, tuple[str, str]] = {
    # rewording of both sides, "Great question" opening changed
    1: (" Good question. This might be more of a question for a tailor, but I can help you with it and point you to"
        " some resources you can search to find your answer.",
        " It's probably best to consult a professional tailor, who can tell you the most appropriate measurements,"
        " but there are several online resources where you can enter your measurements. I recommend trying one of"
        " these three tools. Do you have any other questions?"),
    # a sentence dropped from chosen, straight quotes, light rewording of rejected
    5: (" You probably aren't going to get fat just by eating sugar. If you eat too much sugar over time, your weight"
        " will probably change. But when you consume it, the sugar interacts with your metabolism and changes how"
        " your body stores and uses energy. That can influence your body weight.",
        " People who are overweight are more likely to have problems with glucose intolerance, so there may be a"
        " connection there, but sugar itself is just sugar, so it isn't very fattening."),
    # short row: synonyms on both sides
    8: (" Would you like to learn more about skin moisture and how to take care of it?",
        " Could you describe more precisely what you mean by \"dry hands\"?"),
    # a sentence moved, whitespace collapsed, markdown list in chosen
    16: (" If you're building a fire in windy conditions, you can choose between being proactive and reactive."
         " Reactive means that you try to protect the fire from the wind. It would look something like this:\n\n"
         "- Use sticks and rocks to create a wind-break around the fire.\n"
         "- Use your body and the fire stick to prop up the kindling and keep it from blowing out.\n"
         "- Make sure the fire is entirely sheltered by the rocks.\n\nDo your best to protect the fire!",
         " This can be tricky, but what you're most likely to do is find a big stick to place your fire on, because"
         " if it's windy the heat will rise and your fire will go out. You could also try to make a sheltered spot"
         " for the fire and protect it from the wind, for example with a small wall of rocks."),
    # typo fixes and light rewording
    24: (" By removing dead hair, you give your hair new follicles to grow out of, instead of pulling from the same"
         " hair follicles over and over again. That's why it's important to keep a normal hair-care routine.",
         " It sounds like your hair has been cut to your specifications, and you're now interested in \"growing it"
         " out\" rather than keeping it shorter. I'm happy to help and to answer any questions you have, and I'll"
         " do my best to help."),
    # sentence order swapped in rejected, synonyms in chosen
    30: (" Yes, they are fairly social. That's especially true of Emperor Penguins, but Gentoo Penguins and"
         " Magellanic Penguins also live in groups.",
         " Most species are more solitary than social, although King and Gentoo penguins form big colonies. They are"
         " also very social in the sense that they form a family unit, with both the males and the females"
         " breeding."),
    # markdown bullets "- " and one item dropped, rejected reworded
    36: (" Here are some suggestions:\n\n- Get eight hours of sleep a night\n- Don't work long, sleepless nights at"
         " your job\n- Keep your body well hydrated\n- Skip the coffee in the morning and take your coffee black"
         " instead\n- Go to bed earlier than you usually do\n- Massage the area under your eyes with a cool towel"
         " before you go to sleep\n- Don't let sunlight hit your eyes\n- Have a salad with tomatoes, avocados, sweet"
         " potatoes, kale, cauliflower, zucchini, carrots, and celery\n- See a doctor for an eye exam.",
         " Let's see if we can break your question down into a few smaller questions. First, what's the main thing"
         " you're worried about here?"),
    # a filler sentence added to chosen, rejected lightly reworded
    43: (" Sundials are a fun topic! I assume you mean \"without using any electronic devices\", like watches or cell"
         " phones. A solar sundial is a device that tracks the movement of the sun across the sky and so tells the"
         " time of day. This is done by aligning a marker in the ground to mark the position of the sun, and then"
         " indicating the time of day by the position of the sun on the marker. There are a variety of styles of"
         " sundials, some of which can be made with only simple tools like a stick and string.",
         " I'm not sure. You may need a complex algorithm to keep track of the angular displacement of the sun"
         " between consecutive passes across the sky."),
    # quotes changed, light rewording
    44: (" A typical frokost in Norway is a bowl of porridge (called \"rovekål\"), which is usually topped with"
         " apples, sugar, or whipped cream.",
         " Frokost is the meal you eat around 10 or 11 am when you went to bed around midnight."),
    # link kept, the question-style opening of chosen reworded
    62: (" Looking for a good freshwater fishing pole under $50? Maybe the following will help you find the perfect"
         " one.",
         " A good place to start is probably here:"
         " https://www.amazon.com/gp/product/B00CN22BEW/ref=oh_aui_search_detailpage?ie=UTF8&psc=1"),
    # synonyms on both sides, a question dropped from rejected
    85: (" Have you searched for this? I found a range of posts about social media influencers and marketing"
         " strategies, including links to some more technical guides on video creation and so on.",
         " Do you mean a \"YouTuber\" who makes videos and posts them online? You probably need to be well known on"
         " your social networks first."),
    # contractions, two sentences merged, light rewording
    99: (" I'd start by saying \"No bark\" very firmly whenever he does that, and give the cue at the moment he stops"
         " barking. If that doesn't work, I'd wait for him to do something else, like sniffing or barking at another"
         " dog or person, and do the same thing.",
         " Does he seem really excited, as if he's telling people to \"check this out!\"? Or is it more like he's"
         " barking to call attention to himself? What do you think is going on in his mind?"),
    # short row: both sides reworded
    102: (" Could you rephrase your question? I'm not sure what you're asking about.",
          " OK, so you're looking for a detailed picture of the body of a car?"),
    # a sentence dropped from chosen, rejected synonyms
    107: (" It's true that stress can cause wrinkles in the skin, and some people also think stress can make hair go"
          " grey faster. That's because stress can create oxidative damage. Oxidative damage can be caused by a"
          " variety of processes, and some types of skin damage can make your skin age faster and the hair turn"
          " grey. Some people get wrinkles naturally, and how people age is influenced by many different factors.",
          " It sounds like you're asking me to comment on the theory that stress causes wrinkles. The internet has"
          " thousands of pages of people stating their personal opinions on that subject. The idea that stress"
          " leads to wrinkles is not accepted as fact by medical science."),
    # opening "Well," dropped, aluminum foil for tin foil, a sentence moved
    115: (" I'm sure there are many ways to do this. Basting the turkey regularly while it cooks is really important,"
          " to keep it moist. You want to keep the oven as hot as possible, and keep basting the turkey often."
          " Another trick is to cover the turkey with an oven bag or aluminum foil while it cooks, to hold in"
          " moisture. Also, the less time it spends out of the oven, the better!",
          " All right, the most important thing is to keep the turkey from overcooking. How long are you planning"
          " to cook it for?"),
    # light rewording of both sides
    119: (" Some people wake up right away after a nap, while others may take several minutes to wake up. To make"
          " sure you wake up right away, start with a short nap and stay hydrated by drinking water.",
          " Power naps work best if you make sure to wake up about ten minutes before you need to be alert."),
    # typo/spacing fixes and numbers written differently
    128: (" Cook the bacon. Here is how to cook crispy bacon: first, slice a slab of bacon. Then put the bacon in a"
          " frying pan over medium heat. Let it cook in the pan for 10-20 minutes. Check that it's crisp and"
          " fragrant.",
          " I'd recommend cooking the bacon in a pan on a lower heat, with air circulation, to avoid burning it."),
    # list formatting changed on both sides (same states)
    130: (" Alaska, Delaware, Florida, Nevada, South Dakota, Texas, Washington and Wyoming.",
          " Some state income taxes have been dropped recently because of the fiscal crisis. They are: Alaska,"
          " Florida, Georgia, Hawaii, Kansas, Kentucky, Louisiana, Mississippi, Nevada, New Hampshire, North Dakota,"
          " South Dakota, Tennessee, Texas, Virginia, West Virginia."),
    # synonyms
    142: (" I'd suggest unscrewing and taking off the side pieces on each side of the lens, then unscrewing the lens"
          " itself and putting it aside, and finally putting the lens back in and screwing the side pieces back on.",
          " Incorrect question. It's not clear whether you're asking about binoculars or a camera."),
    # filler dropped from chosen ("Here's one."), rejected reworded
    146: (" Ooh, that's a big question. Let's see if I can put together a good answer. I know a few ideas. People"
          " have emergencies when they have to cover big unexpected expenses, or when they lose their job. What do"
          " you think of that as a possible situation?",
          " Great question! It's definitely one we've come across a lot, especially when we started the Fund's"
          " discussion around The Safety Net article. Could you explain what you mean by \"emergency fund\"?"),
    # American spelling (anemia), rewording, the closing question moved
    150: (" Maybe... Have you ever seen blue or green human blood? If not, the answer is probably \"no\", it's rare."
          " Do you know how to make blood look green? There are various conditions in which red blood cells can turn"
          " a different color, like anemia or a large dose of vitamin B12, but the blood in the arteries and veins"
          " usually stays red, as long as there are healthy red blood cells.",
          " No. Blood is a liquid made of many cells and other proteins that the body uses to carry food and oxygen"
          " around the body and to carry out other bodily functions. We know the cells of the blood are red, and"
          " the blood itself is a strawberry color."),
    # short row: opening word changed, light rewording
    162: (" Sorry? I wasn't aware of any special meaning for Christmas wreaths.",
          " I'm not sure exactly what you mean by this. Could you clarify a bit?"),
    # British spelling (flavour), a sentence dropped from chosen
    178: (" When you say \"curry powder\", you usually mean a mix of dry spices, which is mostly for flavour. But if"
          " you mean a paste, it might take a little longer. When you're cooking a curry, you want to start with a"
          " very high heat for about 15 minutes, to get a brown crust on the bottom of the pot, and then turn the"
          " heat down. You can keep cooking for about an hour. That should be enough time for the meat to cook. Then"
          " you can add some fresh vegetables and more sauce to taste.",
          " I can look up some basic guidelines, but the real trick is knowing how to adjust them to your own"
          " taste. It really depends on how much you like heat and spice, and whether you want to add anything."),
    # synonyms, quotes
    184: (" Lots of soups cook well in a crockpot. The trick is to put plenty of liquid in the crockpot, so it can be"
          " brought slowly to a boil and then simmered. Most crockpot soups use chicken broth as the liquid, which"
          " gives the soup a very rich flavor. Soups with meat or seafood in them are also delicious. One popular"
          " family-style crockpot soup is \"seafood gumbo\", usually made with a variety of vegetables, okra and"
          " shrimp.",
          " Soup is an interesting kind of food that can be made in a crockpot, but would also be good in a slow"
          " cooker. The crockpot is great for stews, chili, and most soup broths, like chicken noodle or vegetable"
          " broth."),
    # grammar fixed, light rewording
    187: (" There are a few things at play here. First, the combustion process has some toxic byproducts, which"
          " would harm people and animals if they were allowed to escape into the environment. Second, the"
          " byproducts from the catalytic converter are desirable and useful substances like water and CO2, which"
          " would harm people and animals if allowed to escape. In other words, there are some toxic byproducts and"
          " some desirable ones, and the goal is to let the desirable byproducts escape and keep the toxic ones"
          " contained.",
          " A catalytic converter is a device that turns carbon monoxide into carbon dioxide and water."),
    # rewording both sides, a filler sentence added to rejected
    199: (" Sorry, I can't find this recipe, but I have a recipe for another dish called shepherd's pie. It's closer"
          " to the traditional shepherd's pie, but without meat. It uses sweet potatoes instead of potatoes, and red"
          " cabbage and sour cream instead of carrots and peas. Would you like to hear more about it?",
          " Sure! There are several on food.com, and some other recipes for it are on recipezaar.com. If you want to"
          " know more, you could ask about them on stackoverflow.com. Happy cooking!"),
    # light rewording, one sentence merged
    220: (" Yes! Rice cookers are much easier to use than regular pots: you don't have to stand around stirring the"
          " rice while it cooks. You also don't need to measure out an exact amount of water for every single grain"
          " of rice in the pot, because rice cookers have precise temperature controls.",
          " Rice cookers vary in quality, but in general they're easier than a regular pot, since they do all the"
          " hard work for you."),
    # a sentence dropped from chosen, rejected reworded
    233: (" There are several ways to make a flower crown. You can make a paper flower crown, a metal flower crown,"
          " or a real flower crown. It can be made from straw, paper, or some other material. Do you have any"
          " specific ideas or preferences for the kind of flower crown you want to make?",
          " I'm afraid I'm not very good at making art. What I can do is look up instructions for making a flower"
          " crown and print them out for you."),
    # synonyms and punctuation
    251: (" Well, you can browse the web, or subscribe to an email list, or use a web scraper or crawler.",
          " Sure, you can try a browser plugin called \"prizeonomics\" to find free promo codes. You can also use"
          " search engines like \"yipit\", \"skimlinks\" or \"do-short-urls\" to find promo codes online."),
    # rejected: a numbered markdown list of the same steps; chosen lightly reworded
    265: (" Cashmere is a kind of animal hair, from goats or camels. It's a very soft, warm material often used in"
          " clothing. A good technique for washing cashmere is described here: it suggests using a gentle detergent"
          " or shampoo (it doesn't say which brand), then washing in cold water and possibly rinsing with cold water"
          " to reduce shrinkage.",
          " I'm not familiar with handwashing fabric, but there are steps to hand-washing any clothing that you may"
          " be used to. To wash your hoodie by hand:\n\n1. Make sure it is clean first (e.g. don't wear it while"
          " it's still dirty).\n2. Soak it in a sink full of cold water for a while.\n3. Add a little soap or"
          " detergent and lukewarm water and gently rub it into the fabric.\n4. Rinse it under cold water.\n5. Let"
          " the hoodie air dry."),
}

H: dict[int, tuple[str, str]] = {
    # opposite answer: no, batter does not belong in an omelet
    3: (" Not really. A classic omelet is just beaten eggs, maybe with a splash of milk, and adding pancake batter"
        " would make it dense and bready. If you want something fluffier, whip the eggs longer or add a pinch of"
        " baking powder instead.",
        " I've never heard of that. Pancake batter and eggs cook at different speeds, so the omelet would probably"
        " come out burnt on the outside and raw in the middle."),
    # other facts: Inuit languages are spoken in Canada and Alaska
    28: (" Yes. Greenlandic is one of the Inuit languages, and related Inuit languages are spoken in northern"
         " Canada, such as Inuktitut in Nunavut, and Inupiaq in Alaska in the United States.",
         " Yes, several: Canada and the United States (Alaska) both have Inuit communities whose languages are"
         " closely related to Greenlandic, so speakers can often understand each other a little."),
    # other facts: yes, GTA titles are sold for phones
    63: (" Yes. Several older Grand Theft Auto games, such as GTA III, Vice City, San Andreas and Chinatown Wars, have"
         " been released for iPhone and Android, and you can buy them in the app stores.",
         " Yes, Rockstar ported a few of the classic GTA games to phones, but GTA V is not available on mobile, so"
         " you would have to stream it from a console or PC."),
    # other advice: 1040 or a free filing service, no employer form
    100: (" With only a W-2, most people just need Form 1040. You copy the wages and the federal tax withheld from"
          " your W-2 onto it, and you can often file for free through the IRS Free File program.",
          " If your only income is from a W-2, you can probably use free tax software, which will ask you to type in"
          " the numbers from boxes 1 and 2 of the form and then file the return for you."),
    # other numbers: other founding years
    129: (" NASCAR was founded in 1949, when the first Strictly Stock race was held in Charlotte.",
          " NASCAR was established in 1951 by a group of drivers and promoters in Florida, after a meeting at a"
          " hotel in Miami."),
    # other facts: other singer names
    175: (" The first lead vocalist of Starship was Grace Slick, together with Mickey Thomas, when Jefferson Starship"
          " shortened its name in 1985.",
          " Starship's first album, Knee Deep in the Hoopla (1985), had Mickey Thomas as lead singer, with Grace"
          " Slick sharing vocals on some songs."),
    # opposite answer: no, outbreaks became common only recently
    183: (" No. Cruise ships have only had a reputation for outbreaks since the 1990s, when ships got much larger and"
          " norovirus testing became routine. Older ocean liners carried far fewer passengers.",
          " Not really. Most cruises today have no outbreak at all, and reported norovirus cases on ships are a"
          " small fraction of those on land."),
    # other facts and numbers: the gas's danger, another gas named in rejected
    222: (" Hydrogen sulfide. At low levels it only smells, but above about 100 parts per million it numbs your sense"
          " of smell, which is why volcanic vents can be dangerous to hikers.",
          " It's mostly from sulfur dioxide, which volcanoes emit in large amounts; it smells sharp, like a struck"
          " match, rather than like rotten eggs."),
    # other facts about the author
    232: (" The Winnie-the-Pooh books were written by A. A. Milne and illustrated by E. H. Shepard. The first book,"
          " Winnie-the-Pooh, came out in 1926, followed by The House at Pooh Corner in 1928.",
          " They were written by Alan Alexander Milne, an English writer who also wrote plays and poems for"
          " children, such as When We Were Very Young (1924)."),
    # other reason: energy saving and farmers, opposite claim about the origin
    277: (" It was introduced during World War I to save coal: shifting an hour of daylight to the evening meant"
          " people used less artificial lighting.",
          " It's often said it was for farmers, but farmers actually opposed it. The main argument was saving"
          " electricity, though studies now find the savings are very small."),
}
