"""Plants of the fifth held-out near-duplicate set (issue 34), written by hand by a reviewer who has not read the
near-duplicate rule's code, its docs, nor the other sets' plants. Keys are base-row indices (0-299) of
neardup_heldout5.jsonl.

P: paraphrased copies (same prompt text; chosen and rejected reworded, meaning unchanged) of the kinds a dataset
pipeline produces when one item is collected twice: synonyms, a sentence moved or dropped, light rewording of both
sides, a heavier rewording of one side, typos added or fixed, a changed greeting or opening, British/American
spelling, polite filler added or removed, spacing and quote-style changes. They SHOULD be found.
H: hard negatives (same prompt text; genuinely different answers: other facts, other numbers, other advice, a refusal
instead of an answer). They must NOT be merged with their base row.
"""

P: dict[int, tuple[str, str]] = {
    # synonyms on both sides, a greeting added to chosen
    1: (" Hi! I believe what you’re thinking of is called “SpaceX Starlink”, a network of satellites that would use"
        " “small lasers and electronic sensors to relay data at super high speeds back to the ground, potentially"
        " offering much faster and cheaper internet service than is possible using current technology” (from their"
        " site).",
        " You can find out more about Starlink and the project’s potential here. The International Astronautical"
        " Federation’s Forum on Space Engineering and the Human Environment is requesting comments on the project by"
        " February 1st."),
    # chosen: the closing sentence moved to second place; rejected: light rewording
    6: (" Yes, that’s a good way to put it.  Reptiles are “cold-blooded”.  Heat is generated in their bodies, but the"
        " rate of heat generation is much slower than in mammals.  Reptiles have a lower metabolic rate than mammals,"
        " which means that their internal temperature changes slower when they’re moving around.",
        " Not quite.  As I said, mammals have a higher metabolism than reptiles, so they need more energy to do the"
        " same thing.  Mammals also generate heat when they’re resting, for example when they sleep."),
    # chosen: last sentence dropped; rejected: synonyms
    7: (" People like to keep physical objects because they remind them of memories and experiences.  Having a"
        " physical object is more real and concrete, and also easier to share with other people.",
        " I’ve heard that physical objects are sort of interesting, because we’re creating memories and other things"
        " that help us interact with our world, but also hold onto our data."),
    # heavier rewording of chosen; rejected nearly unchanged
    18: (" A good place to begin is with a few classes at a nearby university, or online ones.  Education courses"
         " are mostly about teaching itself: how to teach, how to plan lessons, how to develop a curriculum, and"
         " the psychology of children.",
         " I recommend you learn about all the different certification programs."),
    # reworded opening of chosen, light rewording of rejected
    19: (" To start, you need to learn anatomy and understand how all the muscles and bones work together. Then, you"
         " can learn about the physiology of the human body, which refers to the functions of the body. Once you"
         " understand what the body is doing, you can practice and refine the techniques that you’ll use to give a"
         " therapeutic massage.",
         " It’s a good idea to start with a basic anatomy course.  In an anatomy course you’ll learn about the"
         " different body parts, the names of the bones and other structures, and also how they’re connected"
         " together."),
    # polite filler added to chosen; spelling fix "mucous" -> "mucus" and straight apostrophes in rejected
    28: (" I think that’s likely true. There are also various decongestants and other products that people can use,"
         " although I wouldn’t rely on these too much. I hope you feel better soon!",
         " Yeah, it's true that you can use a vaporizer to spread the scent of eucalyptus, that would help to remove"
         " mucus from your nose.  You could also try a neti pot, which has a stronger stream of water, or a saline"
         " solution.  They are supposed to help flush out the nasal passages, but I'm not sure I've ever tried one."),
    # chosen: the cut-off last word completed, "crotch" -> "groin", single spaces; rejected: curly to straight quotes
    36: (" Yes, if you're interested in reducing the impact on your groin, a good option is to buy a saddle that has"
         " more cushioning. Another option, if you want to avoid compromising the fit of your shorts, is to use bike"
         " shorts with only a very minimal amount of additional padding in the groin. While it's not as good as"
         " having cushioned shorts, it is better than riding without any cushioning at all. In general, buying good"
         " cycling shorts is very important, but you can also consider buying a well-padded saddle as a relatively"
         " cheap and simple way to reduce the impact on your groin.",
         " Yup! The general advice is to buy a saddle that's at least a little softer than your current saddle.  The"
         " brand \"Selle Italia\" is a popular choice, since their cushions tend to be more comfortable than the"
         " competition."),
    # British spelling (defence) in chosen; "N.A.T.O." -> "NATO" in rejected
    38: (" The purpose of NATO is to improve relations between member nations in the areas of security and defence,"
         " which in part means helping countries like Germany, Poland, and the Czech Republic defend themselves"
         " against potential threats.  The military alliance is a voluntary association of 29 nations.",
         " NATO is a treaty organisation.  Here is a list of its members:"
         " http://www.nato.int/cps/en/natohq/topics_66741.htm"),
    # light rewording of both sides
    53: (" If you don’t want to go on a date, maybe you could just spend more time together.  Go to a movie, a"
         " concert, a bookstore, or a museum together.",
         " Well, here’s one.  You said your relationship is “on the rocks” - do you mean you’re not seeing each"
         " other as much?"),
    # chosen: the questions reordered; rejected: synonyms
    57: (" That depends.  Are they incandescent or LEDs?  Do you have the lights on year-round?  Do you have it"
         " automated to turn off after a certain amount of time?",
         " It depends on the specifics.  Do you mean artificial Christmas lights that stay on all year?"),
    # heavier rewording of rejected; chosen lightly edited
    64: (" Brown Tree Snakes are considered an invasive species in some parts of Australia, since they were"
         " accidentally introduced there.  But in the US and other parts of North America, Brown Tree Snakes are not"
         " considered invasive.",
         " People use the term “invasive species” for species that have moved into an ecosystem and begun to harm"
         " humans there.  Under that definition Brown Tree Snakes don’t count as invasive: they haven’t been carried"
         " in from elsewhere, and they don’t have a negative impact on people."),
    # chosen: one sentence dropped; rejected: light rewording
    79: (" That’s a good idea!  A lot of people use the term “plot outline” for what you’re describing here.  But"
         " don’t worry about writing the whole thing out all at once.  You might just write a summary for the"
         " current chapter, and make a note to write the next chapter later, then move on to the next one.  You"
         " don’t have to hit every milestone on your calendar!",
         " Yes!  You don’t need to be a mathematician to plan out the plot of your story!  Just jot down a short"
         " summary of what happens in each chapter, and make sure you have some major plot points too.  That way"
         " you’ll know where each new chapter goes when you write it!"),
    # chosen: the doctor's-visits sentence moved first, light rewording; rejected: polite filler added
    81: (" Regular doctor’s visits are important for monitoring your health, especially as you get older.  I’d also"
         " recommend starting a regular exercise program to improve your heart’s ability to pump blood around your"
         " body.  Being overweight or inactive puts a greater burden on your heart, and increases your chances of"
         " suffering a heart attack.  It’s good to eat a healthy diet that includes a variety of fruits and"
         " vegetables, as well as low-fat dairy products and lean meat.",
         " I’m sorry, what do you mean?"),
    # synonyms and a spelling fix (re-discovering -> rediscovering) in chosen; rejected: one sentence trimmed
    83: (" Most cultures have their own distinctive teas and their own special brewing traditions and many people in"
         " the UK enjoy trying new kinds of tea and rediscovering old ones.  There are also plenty of English"
         " superstitions that tie tea into how people interpret their lives, many of which have to do with keeping"
         " calm, coping with a busy life, and social events.  In general it’s fair to say that people in the UK"
         " drink tea out of tradition, and because it’s tasty!",
         " There are many reasons why people enjoy tea.  Many people like that tea is a healthy drink that provides"
         " energy and hydrates the body.  They also appreciate the many flavors and the huge variety of teas"
         " available!"),
    # heavier rewording of chosen (same example, same claims); rejected unchanged but for spacing
    88: (" It’s an arrangement for holding something until something else happens. Say you’re buying a car: you"
         " put some money into an escrow account, and when the car is paid for, the escrow company releases the"
         " money to you and the seller. If the deal goes wrong and you want to cancel the sale, you talk to the"
         " escrow company, and they keep the money for you until it’s sorted out.",
         " It’s a term used in transactions. It describes what happens to money or assets before they’re delivered."
         " Sometimes the escrow agent gets to keep the money for a period of time, and the escrow agent holds the"
         " assets for a period of time, until they’re handed over."),
    # rejected: a sentence dropped; chosen: light rewording
    98: (" I’m not sure I’d say they’re as much a friend as they are an advisor. But what I mean is that having"
         " someone in the field and outside of the field who knows your work is really helpful.  It’s like asking"
         " your best friend to help you with a problem.  They understand your background and know you well enough to"
         " give you advice in exactly the right way and for the exact problem you’re trying to solve.",
         " Not exactly.  But a good advisor is someone who wants to help you get to where you’re going, but does so"
         " in a professional manner, not in a sense of becoming close friends."),
    # light rewording of both sides, "150 degrees Fahrenheit" -> "150°F"
    110: (" You can get rid of them with something called flea powder, which is basically just a poison for fleas."
          "  Or you could use flea collars for cats, which will either catch the fleas and kill them before they"
          " bite, or put the fleas to sleep before they can bite.",
          " You can get rid of the fleas by picking up any bits of fur you can see, then putting them in a jar with"
          " diatomaceous earth, a coarse powder that kills fleas, which you can buy at your local pharmacy.   Next,"
          " put the jar in a dishwasher, which heats up to at least 150°F.  After the cycle is done, empty out the"
          " jar, and vacuum up any remaining fleas."),
    # chosen: synonyms; rejected: the food sentence moved before the enclosure sentence
    122: (" They’re very social animals and they need a great deal of companionship.  They may not be the best"
          " companion if you’re often busy and it’s important for you to have an undisturbed space.  If you’re often"
          " busy and they’re very attached to you, they may need to be taken to a bird care center regularly for"
          " care.",
          " Well, I suppose a lot of things need to be thought about for a pet of that sort. They do need lots of"
          " food -- lovebirds need to eat four to eight times per day, which would get quite expensive. The ideal"
          " enclosure needs to be very spacious, so the bird can move around and spread its wings. The bird needs to"
          " have a safe perch to sleep on and to keep it from getting too cold at night, since it has very little"
          " body fat."),
    # chosen: reworded opening and one question dropped; rejected: the empty "[]" link placeholder removed
    131: (" Oh yes, that’s the trickiest part of cooking with a charcoal grill!  You’ve got to get the charcoal"
          " started somehow, right?  There’s a few tricks we can try, but the easiest way is to just use some lighter"
          " fluid.  You’ll want to wait for the charcoal to be a little more thoroughly dried out before you add"
          " lighter fluid, because if you add too much lighter fluid too soon it will explode and cover you in"
          " burning hot liquid.  It’s actually pretty easy, once you get the hang of it.  Do you want to give it a"
          " try?",
          " The easiest way to light a charcoal grill is with a hand-held propane torch.  They’re available in most"
          " hardware stores, and don’t cost very much.  Here’s one example:"),
    # chosen: the leave-them-in-the-ground sentence dropped, light rewording; rejected: synonyms
    141: (" When the beet tops start to turn yellow, they’re ready to harvest.  You should pull them up before the"
          " tops go brown.  Some people like to let their beets overwinter, which is when the plants die back to the"
          " ground, but the beets will stay good even after the plants are dead.  Another option is to dig up the"
          " beets and store them in a cool, dark, moist place, like a garage.",
          " Beets can be picked at any point in the growing season, as long as you don’t wait too long, or you may"
          " end up with only yellow, or wilted beets."),
    # chosen: synonyms; rejected: "father of 4" -> "father of four", straight to curly apostrophe
    156: (" The Ferber method is a technique for gently helping a baby fall asleep on his own. It teaches the baby"
          " to fall asleep, and stay asleep, by himself. To find out more, I can read it to you from the Baby Sleep"
          " book.",
          " The Ferber Method is a widely-accepted technique for sleep training. It was named after Dr. Richard"
          " Ferber, a pediatrician, researcher, and father of four who developed the method. It’s the best method"
          " for getting babies to sleep on their own."),
    # sympathetic opening added to chosen; rejected: closing offer dropped
    168: (" Sorry to hear about the bite! I'd recommend treating it with ice if it's painful. But you can also use"
          " an EpiPen if you happen to have one, which can reduce swelling and inflammation at the site of a sting.",
          " You don't need to do anything special, just try not to make it worse! The bites may be painful, but"
          " spider bites don't usually cause any serious health problems."),
    # changed apology opening on both sides
    173: (" Apologies, I checked again and the page is missing from the website.  It was just a temporary issue."
          "  I’ll keep looking for a more reliable link, and I’ll let you know if I find one.",
          " Sorry, the website had a problem and couldn’t fetch that page.  Here’s the closest thing I could find:"
          " https://www.epicurious.com/recipes/food/views/vitel-ton%E2%80%99e-12579"),
    # typos introduced in chosen (as a second crawl of a noisier source); "nose bleed" -> "nosebleed" in rejected
    199: (" Oh, yes, when the bleding doesn’t stop within a few minutes, you should call an ambulence.  You should"
          " not lie down.  You can try pinching it.  If that doesnt work, you should also apply ice or cold water to"
          " it, then call an ambulance.",
          " You are probably thinking of a nosebleed due to medication, where the best course of action is to take"
          " blood thinners and stop the nosebleed."),
    # light rewording of both sides
    212: (" If you mean streaks of dirt on the window, maybe wiping the window with paper towels or newspaper will"
          " get rid of the streaks?",
          " Oh, you want to avoid the little streaks that show up after wiping.  I could help, but I'm not sure"
          " exactly what to say..."),
    # heavier rewording of chosen; one word changed in rejected
    215: (" There are several ways to eat cucumbers. You could pickle them, put them in a soup or stew, or even"
          " drink the juice on its own - that last one is what I’d recommend.  Or you could add a few slices to some"
          " bread or crackers.",
          " Cucumbers are really versatile. You can eat them raw, or cook them with other food. They’re one of the"
          " most common foods people can enjoy."),
    # British spelling (litre) in chosen; rejected: light rewording, double space normalised
    244: (" You should be drinking more than a half-gallon of water a day.  It’s great for your health.  You might"
          " try aiming for a litre or two of water each day, if you can.",
          " I think the recommendation is to drink at least 8 glasses of water a day. Some people drink a lot more"
          " than that."),
    # chosen: sentences swapped; rejected: synonyms
    250: (" Though whiteheads are a form of acne, many people have them without having any acne.  Acne is not the"
          " same thing as a whitehead, which is a small, round plug of oil and dead skin cells that can form in the"
          " pores of the skin.",
          " Yes, I think the words “pimple” and “whitehead” are often used interchangeably. They’re similar, but"
          " whiteheads don’t have a pus-filled core like pimples do."),
    # synonyms in chosen (utility knife -> box cutter); rejected: light rewording
    258: (" Great. So first, you need to cut the wallpaper strip to the same length as the wallpaper. For this you"
          " will need a box cutter and a level.",
          " Great, in that case, when you get to the hardware store, you can look for wallpaper that matches the"
          " pattern you want to use."),
    # rejected: a sentence dropped and light rewording; chosen: light rewording
    293: (" You can freeze parsley.  Put a layer of parsley on a cookie sheet and place it in the freezer.  Repeat"
          " until all of your parsley is frozen.  Once it’s frozen, you can take it out of the freezer and store it"
          " in plastic bags.  The advantage of this method is that you don’t have to dry it out first.",
          " Parchment paper is a good way.  You can use any type of paper for this, but parchment is better because"
          " it’s more airtight.  After the parsley has dried, put it in a glass jar with a small amount of oil.  When"
          " the parsley has fully absorbed the oil, pour more oil on top, or put another piece of parchment over the"
          " top to keep it airtight.  Then let it sit on your kitchen counter.  You can make it last for a week or"
          " two this way."),
}

H: dict[int, tuple[str, str]] = {
    # other facts: a different species named largest, a short rejected instead of the long quote
    14: (" The Great White Egret (Ardea alba) is the largest egret, with a wingspan of well over four feet.",
         " The Cattle Egret is the largest type, bigger than the Great Egret."),
    # a refusal and other advice instead of the vet-cream answer / petroleum jelly answer
    15: (" I'm sorry, I can't recommend any eye product for your dog. Please ask your vet before putting anything in"
         " its eyes.",
         " Plain saline eye drops for people are fine to use several times a day; no vet visit is needed."),
    # other facts: another reindeer / a different list
    30: (" Rudolph",
         " Comet, Cupid and Blitzen."),
    # the opposite recommendation
    92: (" No, I wouldn’t bother. Blood tests for vitamins are rarely useful for healthy adults, and you can skip"
         " them unless your doctor asks for one.",
         " Yes, definitely get one, and repeat it every three months."),
    # the other country, and a different answer on the rejected side
    142: (" Nintendo released it in Japan first.",
          " Europe first, then the United States."),
    # other numbers and other songs
    191: (" Well she had her first number one hit when she was 22 years old, with her song We Are Never Ever Getting"
          " Back Together.  Her second number one was Shake It Off, and her most recent number one was Anti-Hero.",
          " She got her first number one hit in 2012, four years after her first album came out."),
    # other years
    193: (" In March 2015.",
          " The game was released in 2004."),
    # other facts and other advice
    280: (" Cardinals prefer safflower seeds, and squirrels and grackles tend to leave safflower alone.  Avoid"
          " millet, which cardinals rarely eat.",
          " Cardinals don’t really eat seed; you’ll attract more of them with fruit and mealworms."),
    # other numbers
    290: (" The books are fairly short.  Most are around 350 pages, and the longest is just over 500, well under"
          " the length of a typical fantasy novel.",
          " The Percy Jackson series has five books, averaging about 250 pages each."),
    # the opposite answer
    296: (" No, they aren’t.  The large kangaroo species are abundant, with tens of millions across Australia.",
          " No."),
}
