"""Hand-written plants for the third held-out near-duplicate set (issue 34): data/precision/neardup_heldout3.jsonl.

Written by the held3 reviewer, who has not read the near-duplicate rule's code nor the other sets' plants.
Keys are base row indices (0-299) of the held3 base (scripts/make_neardup_sets.py ... held3); the rows were drawn
with random.Random(5151).sample(range(300), 46): the first 30 drawn get a paraphrase, the next 10 a hard negative.
P: paraphrased copies (same prompt text; chosen and rejected reworded, meaning unchanged): should be found.
H: hard negatives (same prompt text; genuinely different answers: other facts, numbers or advice): must not merge.
Each entry's comment says what kind of change it is.
"""

P = {
    # synonyms on both sides
    186: (" That's a step in the right direction.  Exercise releases chemicals in the brain that help you drift off "
          "sooner, but getting the right amount of sleep each night is also important.  Do you ever have caffeine "
          "after noon?",
          " Exercise is certainly helpful for falling asleep faster, but I wouldn’t make it the only thing that helps "
          "you fall asleep.  There are some foods that contain caffeine that can disrupt sleep, and I don’t advise "
          "eating them right before bedtime.  Do you drink coffee, or tea, or cola, or any other drinks like that?"),
    # a reworded opening on the chosen side, the rejected side reworded lightly
    219: (" So you want only a chocolate frappe and a lot of coffee ice?  I'm afraid that won't have much flavor, "
          "since you'd be drinking the ice separately from the chocolate frappe.",
          " That is one of the more common flavor variations."),
    # a sentence moved (chosen), a sentence dropped (rejected)
    112: (" Great, so let me see...\n\nDo you want to do barbell exercises, dumbbell exercises, cable exercises, and "
          "so on? Can you explain a bit more about how you want to target the lats? For example, do you want to do "
          "wide-grip pull-ups, narrow-grip pull-ups, rows, and so on?",
          " This is hard to narrow down, because the latissimus dorsi is involved in most activities that use the "
          "back muscles, such as bending down, twisting, pulling things up, etc. But I’ll give you a few options, "
          "do you want to hear them?"),
    # small rewording on both sides ("stop it sticking", British usage)
    14: (" Yes, cornstarch is a natural choice for oven cooking.  In baking, cornstarch helps to thicken things like "
         "sauces or soups. It can also act as an anti-stick agent, so in recipes that call for baking in the oven or "
         "in a pan or panini grill, cornstarch is often included among the ingredients.",
         " If the food is not pan fried, you should use a smaller amount of cornstarch.  The reason is that "
         "cornstarch can act as a \"surfactant\", meaning that it dissolves in fat. So if you're cooking with oil, "
         "you should use cornstarch in order to stop it sticking to the pan and burning. But if you're cooking with "
         "water, you can use less of the starch and avoid over-fatting."),
    # a changed greeting
    55: (" Hello! I'm pretty well, thanks. How are you doing?",
         " I'm just fine, how are you?"),
    # a sentence dropped from the long chosen; the rejected reworded
    262: (" It looks at how words are used in one language and translates them into another language by examining a "
          "large body of text written in both.  After it finds many common ways of using the words, it makes the "
          "translations based on these findings.  It also understands a number of basic concepts like dates and "
          "numbers, which is why it can translate English into French if you ask it what day of the week April 23, "
          "1990 was.",
          " That’s a complicated question!  Could I ask you a couple of questions first?"),
    # small rewording of both sides, list left as it is
    149: (" Oh! I see, this is a Chinese dish.  It has noodles, vegetables and meat.  Shall I make a list of all the "
          "ingredients?",
          " I'm sorry, there isn't any \"chow mein recipe\" in my database.  I only have the following recipes in my "
          "database:\n\n    Spaghetti and Meatballs\n    Spaghetti with tomato sauce and chicken\n    Spaghetti "
          "with tomato sauce and steak\n    Spaghetti with tomato sauce and cheese\n    Cottage cheese with tomatoes "
          "and vinegar\n    Pesto and zucchini"),
    # sentences reordered (chosen), synonyms (rejected)
    40: (" You could run. You could jog or do jumping jacks. You could do a fast walk. You could do jumping rope. Or "
         "you could walk at a faster pace than normal for a minute or two.",
         " Swimming is a great way to do this, or if you like cardio exercises, then you could ride a bike.  You "
         "could also run, and do some gentle stretching exercises to get your body ready."),
    # a synonym and punctuation (the truncated chosen ends with a full stop, a colon in the rejected)
    156: (" The roots should find water and other nutrients from the soil, but if you like, you could put in some "
          "“drip” irrigation tubes to make sure they’re getting enough water.  I have a model at home that shows how "
          "that works.  You might also want to dig a deep hole.",
          " In some cases, yes: if there are plenty of rocks underneath and the soil is loose enough, that would "
          "happen."),
    # reworded opening, a link sentence reworded
    15: (" I think the main issue you're going to run into is creating a house small enough for two birds.  Since "
         "doves typically prefer larger open areas, a 1.5 ft tall house won't give them enough room.  I would "
         "suggest instead creating a box with low sides and a low entrance, so that the doves can easily enter and "
         "exit.  \nDoes that seem like a good idea?",
         " Ok.  I found a list of materials for birdhouses online, which might help. Here is the link: "
         "https://www.kiwibirdcare.org/june-2010/birdhouse-materials.html.  This particular list is only for "
         "birdhouses, but most of the materials you'd need should also work for birdhouses for doves, since they "
         "are the same species.  Maybe you could copy this list and just swap out the “sparrows” part for "
         "“doves”?  What else do you think you might need?"),
    # British spelling (colour) and a small rewording, a clause dropped from the rejected
    86: (" Felt pens are used for painting with fabric paint.  You can use these paints to do simple crafts or painting "
         "projects.",
         " Felt pens are thin felt sheets, usually in the shape of a round or triangle.  They can be coloured using "
         "paint.  You can colour the felt in several ways.  You can dip the felt in paint, using the paintbrush to "
         "apply a thin layer to the felt.  You can also wipe paint over the felt.  Children can also use "
         "paintbrushes or other implements to apply a thicker layer of paint, and then they can roll the felt to "
         "create swirls or patterns in the paint."),
    # small rewording of both sides
    26: (" Yes, I realize that it is not possible for me to fully understand the subjective personal preferences and "
         "experiences of individuals.  I think the main idea here is that people should be free to make their own "
         "choices, and the default response to all decisions should be “yes” - unless the decision clearly and "
         "objectively harms another person.  In that case you should consider whether the decision is morally "
         "acceptable, and what consequences it will have.",
         " I'm sorry if this isn't a fully satisfying answer."),
    # synonyms, a clause moved
    136: (" There are some very useful resources online, like free courses, interactive simulations, and crowdsourced "
          "recordings of native speakers, though nothing is quite as good as being somewhere people actually talk.",
          " You could join a class, where a teacher leads you through learning the language.  And you could also "
          "join a conversation with native speakers online."),
    # a sentence dropped (chosen), the rejected reworded
    228: (" Yes, you can create a “webpage” that only you can see.  It’s still very useful to learn how to make a "
          "web page that can be seen by others on the internet, but it can also be useful to know how to make web "
          "pages that can only be viewed on your computer.  If you are going to be making a lot of web pages that "
          "can only be seen on your computer, I can recommend you use a program called Atom for creating web "
          "pages, as it has a very helpful feature called “previews”.   Once you create your webpage, you can "
          "preview what it will look like using “Atom Preview”.  Do you want me to walk you through how to use "
          "this feature?",
          " Yes, there are ways!  I think you can do this with a service called DropBox.com, but I can’t help you "
          "with it right now, since I don’t have access to a computer on the internet.  Why not ask Google about "
          "it?"),
    # the numbered steps reworded lightly, one clause dropped
    68: (" Origami is the art of folding paper into elaborate shapes and creations. Origami techniques are centuries "
         "old, and were popularized by Japanese origami, although Japanese origami is itself a style of Japanese "
         "paper-folding. Here are some steps to learn origami, in case that’s helpful:\n\n[1]  Get some origami "
         "paper: not all origami papers are the same; they are made of different materials, and folded in "
         "different ways. You can try various kinds of origami papers out.\n\n[2]  Try making some origami boxes: "
         "origami boxes can be complicated and are fun to make.\n\n[3]  Watch some videos about origami: There are "
         "many great videos about origami, and you can watch them to understand how to fold the papers, or to see "
         "more examples of the paper, and get ideas for what you can make with it.",
         " I’m really not a good person to ask about this!  I used to be into origami, and I even worked with it in "
         "my last year of high school, but I am definitely out of practice.  Maybe you should ask someone else?"),
    # a one-word answer by a synonym; the rejected reworded
    10: (" Nope.",
         " That’s a good list.  There’s also a garden hose that has a removable spray nozzle on it.  In some "
         "places,"),
    # a long recipe: a few words changed (US/UK: skinless -> skin removed, cilantro -> coriander leaves) and one
    # rejected sentence dropped
    127: (" Sure, let’s try it out:\n\n4 cups chicken stock\n1 medium onion, minced\n1 tbsp. fresh ginger, minced\n1 "
          "tbsp. ground coriander\n2 cups basmati rice\n2 tbsp. ground turmeric\n4 whole cloves\n1 cinnamon stick\n2 "
          "cardamom pods, smashed\n1 bay leaf\n1 lb. boneless chicken breast, skin removed, cut into chunks\n4 tbsp. "
          "safflower oil\n2 tsp. garam masala\n1 cup whole milk\n1 tbsp. honey\n1 tsp. salt\n2 tbsp. fresh lime "
          "juice\n1 cup roasted cashews\n1 cup chopped coriander leaves\n2 limes, quartered\n\nIn a medium pot over "
          "medium heat, combine the chicken stock, onion, ginger, and ground coriander and bring to a boil.  Add the "
          "rice and stir until all the rice is covered.  Add the turmeric, cloves, cinnamon stick, cardamom pods, "
          "and bay leaf and stir to combine.  Bring to a boil.  Lower the heat and simmer, covered, until the rice "
          "is cooked and the water is absorbed, 15-20 minutes.\n\nIn a separate pot, combine the chicken and "
          "safflower oil and cook over medium-high heat until the chicken is cooked through, about 5 minutes.  "
          "Transfer the chicken to a plate and discard the oil.\n\nReturn the chicken stock-rice mixture to a boil "
          "and stir in the garam masala and honey.  Stir in the cooked chicken and salt and cook until the sauce "
          "thickens, about 5 minutes.  Take off the heat and stir in the lime juice.  Serve right away in bowls "
          "topped with cashews and coriander leaves and lime wedges.",
          " Sure.  The first step is to start by learning the name of the dish.  You mentioned “briyani”, which I "
          "think is the name of the dish.  It turns out there’s a whole bunch of different dishes that are called "
          "“briyani”, so it’s good to learn a few more specific terms for exactly what you’re looking for.  In this "
          "case, I think you want a “curry” called “briyani”.  \nThe first step to making a dish called “briyani” "
          "is to take some chicken or lamb and boil it until it’s cooked.  Then you put it in a pan, and add the "
          "spices that go into making a curry.  A curry usually has a lot of different spices and is very "
          "fragrant.  \nThe next step is to bake it in the oven for a long time.  This gives the meat extra "
          "flavour, and also makes the sauce creamy.  \nAnd then we make a sauce by putting yogurt and spices in a "
          "pot.  We can put vegetables in the yogurt as well, and heat it all together to make a delicious sauce.  "
          "\nWhen it’s done cooking"),
    # small rewording of both sides (aggressive -> stronger, regard -> respect, a -> an autoclave)
    122: (" Both methods can be used to clean any surface, and either can be used to disinfect food or a room, but "
          "the more disinfectant you use, the stronger the action will be and the more damage it will do to a "
          "surface.  To sterilize a surface or room, you need a lot of water and/or steam, or for some solutions, a "
          "lot of ultraviolet light.  Sterilization requires you to not leave any parts uncleaned, like a toilet, "
          "for example, or with any unsterilized parts touching one another.",
          " I'm not entirely sure what you mean.  What do you mean by the “settings”?  Disinfectants are a bit "
          "different in this respect.  You could use bleach or hydrogen peroxide to sterilize a part of a kitchen.  "
          "These would be your “disinfecting” method.  There is also another kind of sterilizing method, called "
          "“steam sterilization” (which you might also know as an “autoclave”), which would not be necessary on "
          "the surface of an object, but which is generally more important if you need to sterilize something "
          "that has been used by a person, like the tools of a surgeon or dentist."),
    # sentences swapped in the chosen, rejected reworded
    169: (" The candles were commonly made from tallow, in fact.  Yule candles were candles made of wicks floating "
          "in tallow, which was made from animal fat.  The candles used in modern Christmas festivities are now made "
          "of paraffin wax.",
          " Wood, and also wax, and other chemicals.  \nIt seems beeswax was a favorite material."),
    # same numbers, reworded (US -> United States)
    185: (" An estimated 2 million people in the United States are allergic to nickel.  They suffer from a range of "
          "symptoms including contact dermatitis, which is a skin rash.",
          " I’m sorry, but you may want to ask this question on a more specialized forum. I can’t answer the "
          "question from just this input, though I would be happy to learn more about your question if you are "
          "willing to keep talking with me."),
    # small rewording (a lot -> much, annual -> yearly, great -> wonderful), curly -> straight apostrophes
    34: (" Well this is tough, since I don't know much about dogs, but I'll do my best to help you.  A \"birthday\" "
         "in human culture is a yearly celebration, with special gifts and rituals, to commemorate the birth of "
         "someone special to you, so how about you decide what makes your dog special, and then get your family to "
         "do something about it?",
         " I hope your dog has a wonderful birthday!"),
    # a list with two names in another order, a sentence reworded
    221: (" Here’s a list of a few of my favorite artists:  Darius Rucker, Tim McGraw, Kenny Chesney, Brad Paisley, "
          "Miranda Lambert, Rascal Flatts, Garth Brooks, George Strait, Kenny Rogers, Joe Diffie, Dolly Parton, Alan "
          "Jackson, Loretta Lynn, Hank Williams, Willie Nelson, and Tanya Tucker.  The lyrics are hard to "
          "understand, though, which I think is more a feature than a bug.  Do you prefer pop or hip-hop or "
          "something else?",
          " I know of artists such as Garth Brooks, Shania Twain, George Strait, Johnny Cash, and John Denver."),
    # a reworded opening (chosen), a question reworded (rejected)
    194: (" A few more of my favorites:\n\nFlow: The Psychology of Optimal Experience (Official Book website)\n\nThe "
          "Happiness Hypothesis\n\nThinking, Fast and Slow (Official Book website)\n\nZealot: The Life and Times of "
          "Jesus of Nazareth (Official Book website)\n\nIn Cold Blood (Official Book website)",
          " What do you mean by “style”? What are you looking for?"),
    # a short yes/no answer reworded; the same answers
    87: (" Yes, heat can lead to metal fatigue.",
         " No, it’s mostly the repeated stressing of a metal object that causes metal fatigue."),
    # small rewording, a short rejected question reworded
    233: (" I can help you with your diet.  For exercises that don’t need special equipment or a gym, I recommend "
          "body weight exercises.",
          " How strong would you like to get?"),
    # a clause moved, synonyms
    6: (" I would recommend gathering small twigs and other dry materials, arranging them to form a “fire "
        "platform”, and then setting the platform on fire.  This will give a hot and manageable fire that will make "
        "a lot of smoke, so if you want to avoid detection by a wild animal, you should probably build it somewhere "
        "you can easily reach without moving through thick underbrush.",
        " Hm, a few things you might try: lighting a twig with a match or flint, rubbing two sticks together to "
        "create friction, or using something like a drill to make a hole in a log and kindling it with a torch."),
    # small rewording both sides
    115: (" A snowman can be made by forming snow into a ball, and pushing it up, and then pressing it into a tall "
          "shape. The snowball can also be rolled down a hill to make it bigger. Some people also decorate their "
          "snowman with things like hats, scarves, and glasses, a carrot for the nose, and maybe some red candies "
          "for the cheeks.",
          " It usually involves snowflakes: you can just put them on a snowman for decoration, or make shapes out "
          "of them, like an arm or a heart or a head. Some people also make eyes out of other snowflakes."),
    # a reworded question (chosen), typo/quote fixes and a synonym (rejected)
    2: (" Are you asking what makes SpaceX, the company, special compared to other rocket companies?",
        " Yeah! I agree with you. SpaceX hasn't 'revolutionized' space travel yet. As of today, they aren't even "
        "leading the private spaceflight industry - Blue Origin is."),
    # a sentence dropped from the long chosen, small rewording in the rejected
    137: (" Well, it depends on what stance you are in already. If you’re standing straight up, and you want to "
          "punch someone, it’s best to get into a “power stance”.  This is where you bend your knees slightly, "
          "with the toes of your feet pointed outward, and keep your shoulders square and upright.  Your arms can "
          "hang loosely at your sides.  \nI want to make sure that you know the importance of using a soft wrist, "
          "and a strong upper body when throwing a punch.  Some additional details on the use of a power stance:  "
          "First, make sure your feet are hip-width apart, and pointing forward.  When you stand up straight and "
          "extend your arm, a right-hand punching posture is commonly used.  This means you’re pointing your fist "
          "forward and your elbow is close to your side.  Your back is straight and your chest is up.  Second, "
          "your chin should be tucked in to your neck.  This increases the power in your punch and can help "
          "prevent you from getting hurt.  Third, your fist should be loosely closed, with your fingers relaxed.",
          " It’s simply when you’re throwing a punch.  Basically, your feet are squared and your shoulders are "
          "square with each other and with your body."),
    # short replies reworded, straight apostrophes
    241: (" You're welcome.  Do you have any more questions about fruit cake?",
          " No problem!  Shall I describe Irish fruit cake or Jewish fruit cake?"),
}

H = {
    # other advice: paste the recipe text instead of sending a link
    155: (" I'm sorry, links don't come through in this chat.  Here is the recipe written out: layer tortilla "
          "chips, black beans, salsa and cheese in a baking dish, top with sour cream after baking at 350°F for 25 "
          "minutes.",
          " Try refreshing the page, the link should show up after a minute or two."),
    # other numbers and the other stance
    106: (" 10,000 is a round number from a marketing campaign; studies find most of the benefit by about 7,000 to "
          "8,000 steps a day, so start from what you walk now and add 1,000 a week.",
          " No, you should aim for 20,000 steps a day if you want to see any results at all."),
    # other facts about turtle origins
    42: (" Not from fish directly.  Turtles are reptiles; the current evidence, such as the fossil Pappochelys "
         "from about 240 million years ago, places them close to the ancestors of lizards and archosaurs.",
         " Yes, turtles evolved from sharks about 50 million years ago."),
    # other advice on which shoes to donate
    213: (" Another rule of thumb: if you haven't worn a pair in the last twelve months, put it in the donation box.",
          " Thanks! Just throw them all out, it's easier."),
    # other facts (other treaty, other numbers)
    247: (" China has only one formal mutual-defence treaty: the 1961 Sino-North Korean Treaty of Friendship, "
          "Cooperation and Mutual Assistance, renewed in 1981, 2001 and 2021.  It has no such alliance with Russia.",
          " Yes, China is a member of NATO and all 30 members must defend it."),
    # the thanks answered with other content (another book by the author)
    110: (" Glad to help!  She has also written adult crime novels under the pen name Robert Galbraith, starting with "
          "The Cuckoo's Calling in 2013.",
          " Sorry, I made a mistake: she only ever wrote one book."),
    # other facts about how AR is used in the game
    187: (" The AR+ mode uses your phone's camera and motion sensors to place the Pokemon on top of the live camera "
          "view, so it looks like it is standing on the sidewalk in front of you; you can turn AR off and see a "
          "cartoon background instead.",
          " It uses virtual reality headsets that you must buy separately for about $300."),
    # other advice on the friend glued to her phone
    141: (" Tell her kindly that you'd like her full attention, or suggest you both put your phones face down on the "
          "table while you eat.",
          " Just take out your own phone and ignore her back."),
    # other advice on fixing a chalk drawing
    47: (" Use a workable fixative spray, or in a pinch cheap unscented hairspray, in light coats from about a foot "
         "away, letting each coat dry.",
         " Brush a thick layer of white glue over it."),
    # other positions on healthcare
    287: (" Broadly, Democrats favor expanding the Affordable Care Act and a public option, while Republicans favor "
          "repealing parts of it and relying more on private insurance and health savings accounts.",
          " Both parties want to ban all private health insurance."),
}
