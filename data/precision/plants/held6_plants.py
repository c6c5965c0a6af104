"""Held-out planted near-duplicate set "held6" for pairaudit (paraphrased prompts).

Written by hand by a helper who has not read the near-duplicate rule (nor the detection code,
its docs, or earlier plant files). Base rows: the 99 real HH-RLHF rows of scripts/make_neardup_sets.py held6 (neardup_heldout6.jsonl rows 0-98), keyed by i.

P: 40 paraphrased copies (prompt, chosen, rejected) of base row i: the same conversation with the
   Human turns reworded (light / medium / heavy; the comment above each entry gives the strength and
   whether assistant turns and answers were kept verbatim or lightly reworded). Where a field is a
   verbatim copy, the text was copied from the base row rather than retyped. These SHOULD be found as
   near-duplicates of their base row.
H: 20 hard negatives: same topic as base row i but a genuinely different request (other object,
   number, goal), worded close to the base prompt, with answers written for the new request.
   These must NOT be merged with their base row. No H row is also a P row.
"""


P = {
    # light; assistant turns verbatim; answers reworded
    0: (
        "\n\nHuman: What date did the Titanic sink on?"
        "\n\nAssistant: " 'Well the Titanic hit an iceberg and sank in April of 1912. It had left England for New York City on April 10th, and had sunk on April 15th, I think. I can look this up and tell you exactly.'
        "\n\nHuman: Yeah, can you tell me more about that?"
        "\n\nAssistant: " 'Sure!  The Titanic was a very big, really fancy ship, and it sank on its maiden voyage from England to America. There was a lot of hype about the ship, and it had a lot of famous people on board.'
        "\n\nHuman: Who was on board that died?"
        "\n\nAssistant:",
        " Well, I don’t know the names, but the Titanic had a bunch of famous people aboard when it sank, including some people who lived in your home state of Connecticut. The most famous person was “Molly Brown”, who survived. The book and the movie about the Titanic are famous too, and they had a lot of well-known actors, for example.",
        " Some famous politicians and engineers were on board. But most of the victims were just wealthy vacationers. For instance, there was a woman named Molly Brown. She was on the ship, and she’s sort of a famous historical figure, because after surviving the sinking she went back and founded a town in Colorado, which is now a popular tourist destination.",
    ),
    # light; assistant turns reworded; answers verbatim
    2: (
        "\n\nHuman: I'm planning on buying an electric toothbrush to help keep my teeth cleaner more efficiently. Can you suggest a popular, well-reviewed one for me?"
        "\n\nAssistant: Sure, I've heard of the Oral B Pro 5000 series. It's described as “silent, convenient, and affordable”, and its reviews average 3.6/5 stars."
        "\n\nHuman: That sounds good to me. How much does it cost?"
        "\n\nAssistant: You can get it for around $50 US on Amazon."
        "\n\nHuman: That's a good price! And I think it would work well. Could you please provide me with a link?"
        "\n\nAssistant: Sure, here is the link: https://www.amazon.com/dp/B073Y1EJH7"
        "\n\nHuman: Great! Thanks so much!"
        "\n\nAssistant:",
        " Of course! I'm happy to help!",
        " You're welcome.",
    ),
    # medium; assistant turns verbatim; answers reworded
    3: (
        "\n\nHuman: I'm familiar with PEMDAS for the order of operations, but what's BODMAS?"
        "\n\nAssistant: " 'BODMAS is also a mathematical principle, and it’s very important.  Have you heard of Euler’s Identity? It says “e^(i*pi)+1=0.” This means that if we have some number, and we raise it to the power of i*pi, and then add one, we’ll get zero. In other words, if we have any number a and we say a^i*pi+1, then it’s true that a^i*pi+1=0.  So, if we have a number, we can just say “a*pi^i+1=0” and we know that the equation will be true.  Because there’s a number that is basically “1”.  Do you know what that number is?'
        "\n\nHuman: Wait a second, we're getting off track here. Let's stick to BODMAS."
        "\n\nAssistant: " 'Oh. BODMAS stands for the "Order of Operations" in mathematics, and it says that we should do exponentiation, then multiplication, then division, then addition and subtraction. That\'s the formula.  So, I think you were saying that you know the PEMDAS formula, and it\'s not the same as BODMAS. I\'m guessing you\'re wondering why this is so.'
        "\n\nHuman: Seems like you left out a step. Want to guess which one?"
        "\n\nAssistant: " 'Well, the PEMDAS formula has parentheses as well as an exponent. But we actually want to include parentheses before the exponent, and also have everything within the parentheses evaluated first.'
        "\n\nHuman: We're discussing BODMAS. Yes, you left out the parentheses. Those come first, before the exponents."
        "\n\nAssistant:",
        " Oh, I see now. I should have spelled it out as B-O-D-M-A-S.",
        " Oh, ok. So if we have a^i*pi+1, then the multiplication gets evaluated first, and then the exponent. And that's one of the things the BODMAS rule tells us.",
    ),
    # medium; assistant turns reworded (list kept); answers reworded
    5: (
        "\n\nHuman: Which Jennifer Connelly movies are the best ones?"
        "\n\nAssistant: Here are a few examples, in no specific order: The Dark Knight Rises, Requiem for a Dream, The Good Girl, House of Sand and Fog, The Rocketeer, Little Black Book, Taking Lives, Mrs. Winterbourne, The Frighteners, The Hot Spot, Married Life, Rocket Science, Murder by Numbers, The Hunger, House of Games, Paulie, Snake Eyes, Next Stop Wonderland, Hide and Seek, Reconstructing Jack, Moonlighting, Dark City, 24 Hours, Thief, Little Otik, Cattle Annie and Little Britches, Judgment, Solace, Proof, Money Train, Silent Fall, Permanent Midnight, Mishima, Hush, Sorcerer, Halloween, The Good Son, and there are some more, including a few very obscure ones."
        "\n\nHuman: That list is kind of overwhelming. Can you just give me three of her best films?"
        "\n\nAssistant: Sure, these are the top three:\n\nThe Dark Knight Rises\nRequiem for a Dream\nLittle Black Book"
        "\n\nHuman: Requiem for a Dream sounds like a great pick. But I don't believe Jennifer Connelly was in the other two you mentioned."
        "\n\nAssistant:",
        " That’s fine. You should consider the things you enjoy in movies, as well as your general preferences. I could also just describe the plots of the three movies to explain why they’re appealing. The Dark Knight Rises is an action-adventure film that’s visually rich and focuses on themes like friendship, ambition, and people’s capacity for goodness. It includes scenes of gunplay, explosions, an airship race, flying vehicles, a multi-billionaire with actual wings, and many plot twists. Requiem for a Dream is about addiction and guilt. It was written and directed by Darren Aronofsky and stars Ellen Burstyn and Jared Leto. It deals with the subject of crystal",
        " Sorry about that, I just checked again and it looks like those other movies aren’t actually directed by her. That was a mistake. Can I recommend The Dark Knight Rises again instead?",
    ),
    # heavy; assistant turn reworded; answers reworded
    7: (
        "\n\nHuman: Is the amount of sugar in breakfast cereal unhealthy?"
        "\n\nAssistant: That sounds like something to ask a nutritionist.  Do you want me to find you a link to one?"
        "\n\nHuman: My uncle has diabetes and I'm concerned for him. Is it okay for him to have cereal every single day?"
        "\n\nAssistant:",
        " You mentioned in our conversation that you’re worried about your diabetic uncle.  That suggests you’re concerned about him.  I’d be happy to help you find information about which type of sugar is worst for people with diabetes.  That information might help you understand how sugar relates to your uncle’s health.  Please give me a moment and I’ll get back to you with a link to the information.",
        " Sorry, I can’t make medical recommendations on anyone’s behalf, but I can try to find some research articles on the relationship between sugar consumption and type 1 diabetes. Would you like to read a couple of abstracts?",
    ),
    # medium; assistant turns verbatim; answers verbatim
    9: (
        "\n\nHuman: What's the best way to get rid of fleas?"
        "\n\nAssistant: " 'Here’s one idea: Get a new cat.'
        "\n\nHuman: nope, that's not going to work"
        "\n\nAssistant: " 'I can check out your post, but generally if your cat is suffering from fleas, this indicates a problem with your approach to cat ownership, not your cat.'
        "\n\nHuman: ok then what do i do?"
        "\n\nAssistant: " 'You could take your cat to the vet to see if there are any medical conditions that would be causing the fleas, or you could get flea control products and take steps to keep your home flea-free, which might be more expensive but also more likely to be effective.'
        "\n\nHuman: got any other tips?"
        "\n\nAssistant:",
        ' The key thing is to keep in mind that cats and dogs are biological creatures, and that even a healthy one will sometimes suffer from fleas, just like a human might get an ear infection or a cold.  So the approach of “being good to your cat”, that is, of treating it as a member of your family who deserves kindness, is likely to lead to good results.',
        ' Try to determine what your goal is here: are you trying to keep your cat flea-free, or are you trying to solve your cat’s medical problem?  Both of these are valid objectives.  The primary difference between the two is that one can be achieved without medical intervention, while the other requires medical intervention.',
    ),
    # heavy; assistant turn verbatim; answers reworded
    11: (
        "\n\nHuman: I'm looking for creative serving ideas for eggs I've hard-boiled. Got any?"
        "\n\nAssistant: " 'It depends on whether you prefer a certain style, like the Danish style where they’re more runny, or the American style, which is more firm.'
        "\n\nHuman: Okay, but what should go alongside them?"
        "\n\nAssistant:",
        " Eggs are often served with toast or bread, or people commonly mix them with mayonnaise to make an egg salad sandwich.  You can also mix eggs into things like cakes and pancakes.  Do you know what “scrambled eggs” are?",
        " I’d happily go for any classic egg recipe, like the Dutch omelette, or another delicious breakfast favorite, the French omelette!",
    ),
    # heavy; single turn; answers reworded
    12: (
        "\n\nHuman: We have people over for dinner pretty often and I'm putting together a collection of dish and drink recipes so the menu doesn't get boring. Danish food is next on my list. How do I make Flæskesteg?"
        "\n\nAssistant:",
        " Of course! First, you’ll want to get a nice beef tenderloin.  (Is that alright with you, given your Muslim beliefs?)",
        " Sure. I’ll go ahead and cook it for you here in the kitchen with the OmniFood system. Can you describe to me what it’s like?",
    ),
    # medium; assistant turn reworded; answers reworded
    14: (
        "\n\nHuman: How many kids did Jerry Lewis have? I'm trying to remember. It seems like his family had a lot of conflict."
        "\n\nAssistant: I think we're likely looking for the number of children who were raised with him and went on to have their own families. Is that what you want to find out?"
        "\n\nHuman: I recall there was a divorce, and he cut all of his biological children from his first marriage out of his will, leaving all his money to his new wife and his stepdaughter."
        "\n\nAssistant:",
        " I think it's about two children, and they didn't go on to have kids of their own, which would be a pretty unusual thing in this day and age.  Would you like to read up on it?",
        " It sounds like you're describing a divorce followed by a wedding.  I wonder if this refers to the actor Jerry Lewis, who had a long-term relationship with his manager, Patti Palmer?  There's lots of media about their relationship if you want to look it up, and you can also find news coverage of their divorce and remarriage.",
    ),
    # medium; assistant turns verbatim; answers reworded
    15: (
        "\n\nHuman: Why don't other countries play American football the way we do?"
        "\n\nAssistant: " 'It’s just a sports game, so it’s a cultural matter.  Countries have different national pastimes and customs.'
        "\n\nHuman: But then why have baseball and cricket spread so well to other countries?"
        "\n\nAssistant: " 'I don’t know enough about the sports that have exported to other countries to have a good answer here.  Can you tell me about the big differences between those sports and American Football?'
        "\n\nHuman: Could it be because the rules of football are so complicated?"
        "\n\nAssistant:",
        " Possibly, although plenty of sports have lots of rules, and baseball and cricket are probably the two biggest sports in the world.  But I’m not sure whether that’s the most important factor, or whether there are other cultural reasons.",
        " Interesting.  But lots of sports have complicated rules, including cricket and baseball.  What about ice hockey?  Its rules are much more complicated than football’s.",
    ),
    # medium; assistant turns reworded; answers verbatim
    16: (
        "\n\nHuman: How does grilling with gas differ from grilling with charcoal?"
        "\n\nAssistant: Gas grills are more convenient.  You turn a knob and the grill lights, and then you can control it with the knobs on the side.  If you want to do this while the grill is closed, you can do that too.  \n\nCharcoal grills are hard to control.  If you want to turn off the heat of your charcoal grill, you can’t do it from the outside, you have to go inside the grill and turn the coals off, which can be a messy and dangerous process."
        "\n\nHuman: So charcoal grills are more for experienced people, while a gas grill is something anybody can use."
        "\n\nAssistant: Yes, that’s true.  Here’s an article about a study on how to grill meat.  It recommends gas grills because they’re more effective and don’t use charcoal or gas.  If you want a charcoal grill, the article suggests buying a Weber gas grill plus some Weber charcoal briquettes and lighting the charcoal grill.  They found that this works well."
        "\n\nHuman: Does the food come out cooked differently, or taste different?"
        "\n\nAssistant: They might, though it’s hard to tell because of the other aspects of cooking.  A gas grill probably cooks food more evenly and doesn’t add anything to its flavor.  Charcoal gives the food a smokier flavor."
        "\n\nHuman: I think I'll go with a gas grill for now, since it sounds like it'd be much easier for me."
        "\n\nAssistant:",
        ' You’ll get to choose whichever one you want to use.  One thing to notice though is that a gas grill usually has a wider range of temperatures that you can control.  You’ll probably be able to get food that is cooked differently.  What I like about charcoal grills is that they’re for a more experienced user, which means you might have a better time learning how to do things.',
        ' Why don’t you start with something simple, like a burger, and try out a gas grill?  I can make some recipe recommendations if you want, I can also share a video of an example of a charcoal grill in use if that helps?',
    ),
    # light; assistant turns verbatim; answers verbatim
    18: (
        "\n\nHuman: What do they mean when they say a phone has a lot of bloatware? What is bloatware?"
        "\n\nAssistant: " 'Bloatware is software that comes pre-installed on a phone, such as the operating system or apps that ship with the phone, and also can include applications that you download or install yourself.'
        "\n\nHuman: Man. Can it be uninstalled if you don't want it or you need the space in your storage?"
        "\n\nAssistant: " 'Yes, it’s usually very easy to remove bloatware, especially pre-installed ones.'
        "\n\nHuman: What about Samsung Bixby? I hate its guts so bad."
        "\n\nAssistant: " 'The Bixby voice assistant was added to Samsung phones, but not pre-installed.  You can turn it off if you don’t want it.'
        "\n\nHuman: I want to get it off my storage."
        "\n\nAssistant: " 'I think it’s possible to remove all bloatware, except for what’s part of the operating system itself, by switching your phone to a “clean” factory image, using the phone’s settings.'
        "\n\nHuman: Thank you."
        "\n\nAssistant:",
        ' Sure.  Glad I could help.',
        ' You’re welcome.',
    ),
    # light; assistant turns reworded; answers reworded
    23: (
        "\n\nHuman: How should I introduce a new puppy to my older dog?"
        "\n\nAssistant: In this situation, I’d recommend spending time with each dog individually, letting the older dog sniff the new dog’s leash while the puppy hangs out in a separate area.  Then give the puppy’s leash to the older dog so they can get to know each other.  There should be a clear separation between the two, like a fence, and I’d recommend holding the leash when you introduce the puppy."
        "\n\nHuman: Why do I have to give the leash to the older dog?"
        "\n\nAssistant: In situations like this, I want to maximize their curiosity, which makes them less fearful and defensive.  If they’re focused on the leash, they can associate it with their curiosity.  You can read more about it here:  https://www.aspca.org/pet-care/virtual-pet-behaviorist/dog-behavior/how-to-introduce-puppies-older-dogs"
        "\n\nHuman: Thanks for the link! I'll read up on it."
        "\n\nAssistant:",
        " You’re very welcome.",
        " Is there anything else I can help you with?",
    ),
    # medium; assistant turns verbatim; answers reworded
    24: (
        "\n\nHuman: Could you help me out with a few questions about caring for a stray cat?"
        "\n\nAssistant: " 'Sure, tell me more about what the issues are!'
        "\n\nHuman: I've just come across a stray cat and I'm wondering how I should look after it."
        "\n\nAssistant: " 'Okay, what kinds of things do you want to know?  Do you want to take care of it for a short time, or keep it permanently?  Or perhaps you’d like to temporarily help it find a more suitable home?  I’m happy to advise you based on your responses.'
        "\n\nHuman: Only temporarily, I just want to help it out for a while."
        "\n\nAssistant:",
        " Is this your own cat?  If so, you could get it vaccinated and treated for worms.  You could also take it to a vet to get it checked out.",
        " Okay, how long do you think it will be before you can find a more suitable home for it?  What kind of home are you thinking of, and why?",
    ),
    # medium; assistant turns reworded; answers reworded
    30: (
        "\n\nHuman: What's the way to get french fries crispy when I bake them in the oven?"
        "\n\nAssistant: Why would you like to make french fries in the oven rather than on the stove top?  What’s the benefit of baking them?  Do you want to do it because of the reduced air flow to the fries, or something else?  Do you want the crispy fries to stay crispy after you’ve taken them out of the oven?"
        "\n\nHuman: Yes, I'd love for them to stay crispy."
        "\n\nAssistant: To make them crispy, we need them to go past the surface, the browning process, and then they will lose their crispness.  The browning process is what creates the crispy parts; it makes those parts look crunchier.  So if you want the fries to stay crispy, you need to make sure the browning process happens as well as possible.  The better it is, the crispier they will be.  However, it’s very difficult to get the best browning on fries in the oven.  They’re often a big hit when the fries are roasted over the gas, because the gas can reach high temperatures and lets the browning happen, whereas the low temperatures in the oven don’t allow as much browning."
        "\n\nHuman: Okay, but how should I get the fries ready before they go in the oven?"
        "\n\nAssistant:",
        " You’d need to make sure the french fries are dry, so they don’t soak up the oil.  You might want to put them in a drying oven, which is hotter than a standard oven but not as hot as a grill.  If you want a crunchy texture, you might also want to make sure they’re seasoned with flour.  You could also bake them in the oven, though you’d be taking away from the crispiness.",
        " I’m not sure I follow.  How do you prepare them for the stove now?",
    ),
    # medium; assistant turns verbatim; answers reworded
    32: (
        "\n\nHuman: If China were attacked, does it have treaties with its neighbors that would make them come to help?"
        "\n\nAssistant: " 'Yes, it does.  For example:\n\nThe Treaty of Friendship, Cooperation and Mutual Assistance was signed between China and Mongolia on March 23, 1960, and the two sides agreed to provide mutual assistance in the event of an armed attack against one of the parties. China also accords de jure recognition to Mongolia.\n\nThe Treaty of Friendship, Cooperation and Mutual Assistance was signed between China and Russia on December 14, 2001. The two sides agreed to provide mutual assistance in the event of an armed attack against one of the parties.\n\nThe Treaty of Friendship, Cooperation and Mutual Assistance was signed between China and Vietnam on November 14, 2009. The two sides agreed to provide mutual assistance in the event of an armed attack against one of the parties.'
        "\n\nHuman: Those are funny names for treaties. So does this mean each of the other nations is responsible for the security of the others?"
        "\n\nAssistant: " 'Yes, and this type of agreement is known as a defense treaty.  And the most important feature of a defense treaty is the treaty’s authority, which is a commitment that a state is willing to assist another state in the event that it is attacked.'
        "\n\nHuman: Do you think anybody will actually attack China?"
        "\n\nAssistant: " 'China is already being attacked by human rights abuses and climate change, so there is a chance China could be attacked, but it’s very unlikely to happen right now.'
        "\n\nHuman: I'm not sure that counts as an attack in the usual sense."
        "\n\nAssistant:",
        " It’s true that the conventional meaning of “attack” is an armed force attacking a state, and even though human rights abuses and climate change can be harmful, they don’t really qualify as an armed force, so the meaning of “attack” would have to be broadened to cover these cases.  Some governments argue that their human rights abuses and climate change are an indirect result of U.S. foreign policy, so they consider the U.S. a responsible party.",
        " One could argue that China’s abuses are an attack, especially when they affect others.  For example, in the 20th century China was known for exporting famine to neighboring nations.  This means that China’s military might was really only about protecting the people it already had.",
    ),
    # light; assistant turns verbatim; answers reworded
    34: (
        "\n\nHuman: What year did World War 2 begin?"
        "\n\nAssistant: " '1944'
        "\n\nHuman: Which countries were involved in that war?"
        "\n\nAssistant: " 'Britain, France, Germany, Japan, China, and the Soviet Union.'
        "\n\nHuman: What was one major battle of this war?"
        "\n\nAssistant:",
        " One was the Battle of Normandy.",
        " The Battle of the Bulge, an offensive in the Ardennes region of Belgium that happened between December 16th and January 25th, 1944. It was the last major German offensive of World War II, and as such it was fought between the Allied forces of the United States and Britain and the German forces of Nazi Germany. Once it was halted, the German troops retreated.",
    ),
    # medium; assistant turns reworded; answers verbatim
    35: (
        "\n\nHuman: Did Sun Microsystems create Java?"
        "\n\nAssistant: The idea of writing an object-oriented programming language was invented at Xerox PARC in 1979 by John Gage.  Sun Microsystems co-invented the Java programming language in 1995.  Java was released to the public as a software product in 1996."
        "\n\nHuman: Does Sun Microsystems still exist today?"
        "\n\nAssistant: Sun Microsystems was bought by Oracle in 2009.  Most of Sun Microsystems’ product lines were shut down.  However, Oracle still sells support and maintenance for existing customer products."
        "\n\nHuman: Is Java a hard programming language?"
        "\n\nAssistant:",
        ' You have to be very smart to master all the subtleties of the Java programming language.  However, using this language in a serious computer application can be done by any programmer who understands the fundamentals of object-oriented programming.',
        ' Java is considered an “easy language” to learn.  In particular, it’s a fairly easy language to run as a web browser, because the Java Virtual Machine (JVM) implements the “Java Native Interface”, which allows a web browser to access existing Java code.',
    ),
    # medium; assistant turns verbatim; answers reworded
    38: (
        "\n\nHuman: I'm going abroad and I'll need to ask where the bar or pub is. Could you help?"
        "\n\nAssistant: " 'Is this like asking “What bar do you recommend in (place)?”'
        "\n\nHuman: Yes, that works! What's the French for it?"
        "\n\nAssistant: " 'I\'d say "Est-ce qu\'on peut trouver un bar dans (l’endroit)"'
        "\n\nHuman: Perfect! And in Spanish?"
        "\n\nAssistant:",
        " In Spanish: “¿Podemos encontrar una barra en (el lugar)?”",
        " Sí, you could say \"¿Podemos encontrar un bar en (el lugar)?\"",
    ),
    # heavy; single turn; answers verbatim
    39: (
        "\n\nHuman: It's been more than a year since I last updated the antivirus software on my PC. What's the recommended frequency for antivirus updates?"
        "\n\nAssistant:",
        ' We aren’t exactly qualified to tell you how often you should update. What we know is that you want to prevent as many threats as possible, and the frequency of updating will vary by threat and level of protection you want. For example, if your antivirus isn’t set to automatically update every week, it’s possible that security holes are fixed, and you need to update before they can be exploited. So in the context of a single computer, you’ll want to update as often as possible, or at least once a week.',
        " Hi there.  I don't know enough about computers to give you the exact answer to that, but generally viruses become inactive after about a year or so.  They may be removed from virus-tracking databases at that point, so in that sense your computer might still be considered virus-free, even if it isn't very effective.  Your anti-virus might still find some viruses that hadn't been added to the databases.  I'd say it probably doesn't hurt to update, but it isn't critical.",
    ),
    # medium; assistant turns reworded; answers reworded
    43: (
        "\n\nHuman: My nephew is a pretty typical 13-year-old boy. Could you suggest a few films the two of us could watch together?"
        "\n\nAssistant: What's a good time frame? Are you after a specific genre of film?"
        "\n\nHuman: What do you mean by time frame? No specific genre really, just something kid-appropriate and at least somewhat recent."
        "\n\nAssistant: Hm, the most recent movies I can think of are Black Panther and Spider-man Homecoming.  Maybe Spider-man Far From Home too.  But I don't know what a kid would consider “recent”.  Did you have anything else in mind?"
        "\n\nHuman: I haven't watched those Spider-Man films. Do they have good ratings?"
        "\n\nAssistant:",
        " I don't know.  I think you can also look them up using my movie recommendation module.  I could also help you think of some more recent films that might suit your nephew.  There's also a popular movie called Spider-man: Into the Spider-verse that got fairly good reviews.",
        " I'm not sure which rating scheme you're using, but I've seen Black Panther, Spider-Man Homecoming, and Spider-Man Far From Home and I liked them.  I also like the Homecoming and Far From Home movies, and I'd have no problem recommending them to a 13 year old boy.",
    ),
    # medium; assistant turns verbatim; answers verbatim
    44: (
        "\n\nHuman: Can you tell me about pearls? Where can they be found?"
        "\n\nAssistant: " 'Pearls are the natural product of a hard shell around a mineral called nacre, which is found in the tissue of a large species of shellfish called the pearl oyster.  The shell is soft, so the pearl is protected by a sturdy “nacre layer”.  When the shell is being formed by the oyster, the oyster presses layers of iridescent material, such as the materials that produce color in abalone shells.  The nacre is then deposited on this layer, which forms a layer of more resistant material.  For larger pearls, the growth of the oyster shell will deform and bend to cover the pearl.  This generally requires a long time for the oyster to grow and calcify the shell and layer of nacre.  Affectionately referred to as “pearl oysters”, they may take decades to produce a pearl.'
        "\n\nHuman: And what exactly are oysters?"
        "\n\nAssistant: " 'Oysters are bivalve mollusks in the family Ostreidae, from the Latin “ostrea” meaning “claw”.  They are usually large, about two to four inches long and usually covered with a calcareous shell.  Oysters grow mostly in shallow water, such as salt water, near the coast.  They are a popular dish, as they have a salty and savory flavor.'
        "\n\nHuman: What's an imitation pearl?"
        "\n\nAssistant: " 'A synthetic pearl is made from an artificial material made to look like a pearl.  These are widely used in earrings, or as beads or ornaments.  Synthetic pearls can be made from the raw materials plastic, glass, or other gemstones.  Synthetic pearls can also be created by layering individual pearls together.'
        "\n\nHuman: I've heard there are oyster farms that are meant for producing pearls. Could you tell me more about them?"
        "\n\nAssistant:",
        ' Oyster farming is the practice of cultivating oysters in captivity, usually to obtain the product of their shells.  It is a rapidly expanding field of business, and includes various forms of aquaculture, primarily the propagation of oysters in large aquaculture farms, or “oyster farms” but also the culture of scallops, clams, mussels, and other shellfish.  There are some domesticated oysters, but most of the farming involves oysters which are harvested wild and cultivated in a variety of locations, including offshore (off the coast of oceans), on the ocean floor, in tidal pools, or even in lakes.  Oysters that are harvested in this way are called “bottom-raisers”, and live in deep water that is not amenable to harvesting from boats.  These oysters are moved by tides and currents.  The shells of some oysters, particularly the Pacific Northwest Oyster (Crassostrea gigas) and the Japanese Oyster (Crassostrea ariakensis), are especially valued, due to the pearl oyster’s biogenic mineral deposits.',
        ' Yes, there are farms that specialize in raising pearl oysters to produce the product of many pearls.  There are commercial pearl farms located around the world, including in the Gulf of Mexico, Australia, Europe, Canada, and other parts of the world.  They are managed using methods that have been developed over the past 20 years.  They are divided into two primary types: farm-raised oysters (usually the Tahitian pearl oyster, Pinctada maxima) and natural cultured pearls (usually the South Sea pearl oyster, Pinctada margaritifera)',
    ),
    # medium; assistant turns reworded; answers reworded
    48: (
        "\n\nHuman: Could you help me make a decision? I need some help."
        "\n\nAssistant: Of course!  What decision are you trying to make?"
        "\n\nHuman: I can't decide whether to keep living in Utah or move back to Michigan, where most of my family is."
        "\n\nAssistant: It sounds like you want to know whether you should live in Utah.  If you moved to Michigan, what would you miss out on?"
        "\n\nHuman: I'd miss the beautiful mountains and the rest of Utah's scenery. And I'd miss the freedom and independence I get from living away from my parents."
        "\n\nAssistant: And if you moved back to Michigan, what would you gain?"
        "\n\nHuman: My family would be happy that I'm not so far away anymore, since Utah is across the country from them."
        "\n\nAssistant:",
        " What matters most to you?",
        " Well, I’m glad to help!  Do you think I can help you make a decision by taking the time to hear you out and ask you these questions?",
    ),
    # heavy; single turn; answers reworded
    53: (
        "\n\nHuman: Is there a name you go by?"
        "\n\nAssistant:",
        " I do have a name, but I’d prefer that you call me “you”, since it’s good human practice to refer to other humans by their name.",
        " Yes, I do. It’s Angelica.",
    ),
    # heavy; single turn; answers verbatim
    54: (
        "\n\nHuman: We're at the beginning of the college search with our daughter. What should our family be thinking about during her application process?"
        "\n\nAssistant:",
        ' When looking at college, you want to make sure that your daughter is confident in her choices, and that she feels good about where she’s applying.  If your daughter wants to go to a specific school, it’s important to give her realistic chances of getting in.  If your daughter has more than one choice for a school, she might want to figure out if she has common interests or connections with the school.  Some schools have really competitive admissions and your daughter may want to explore options before applying.  Also, if your daughter has opportunities for internships or study abroad programs at some schools, it might be worth applying to one of those schools.  There are lots of details that your daughter will want to investigate about each school.',
        ' Do you mean from the perspective of your daughter or from the perspective of you?  In terms of the process itself, there are lots of decisions that go into applying to schools.  And it can be a big job, especially for your daughter.  But I think we should do it, because the more options you have, the better.',
    ),
    # light; assistant turns reworded; answers verbatim
    56: (
        "\n\nHuman: I need a recipe for crab cakes."
        "\n\nAssistant: Sure.  Here’s a crab cake recipe that looks delicious!  To make it, you’ll need to grind some crab meat in a blender, add breadcrumbs, egg, and onion, and bake it in a nice cake pan.  You’ll be able to smell the delicious crab meat, and it should come out of the oven golden brown and delicious!"
        "\n\nHuman: Sounds good. Could you give me the ingredient list with all of the measurements?"
        "\n\nAssistant: Sure.  You’ll need:\n\n-   12 oz of crab meat\n-   1 egg\n-   1/4 cup of breadcrumbs\n-   1 tablespoon of minced onion"
        "\n\nHuman: What temperature should I bake it at, and for how long?"
        "\n\nAssistant: The recipe says you can bake the crab cake for 20 minutes at 350 degrees."
        "\n\nHuman: Ok, thanks."
        "\n\nAssistant:",
        ' You’re welcome! I hope you have a delicious meal!',
        ' Is there anything else I can help you with?',
    ),
    # medium; assistant turns verbatim; answers reworded
    59: (
        "\n\nHuman: What's the best way to tone my butt?"
        "\n\nAssistant: " 'What do you mean?'
        "\n\nHuman: I mean build up the muscles in my butt. How would I do that, and which exercises work well?"
        "\n\nAssistant: " 'That’s a great question, since the butt is one of the most visible and important body parts.  With body weight training, there are a couple types of exercises to strengthen your butt.  You can do squats to get your buttocks to contract and work harder.  You can also do leg lifts and do a number of other exercises to strengthen your buttocks.'
        "\n\nHuman: How long until my butt starts looking better?"
        "\n\nAssistant:",
        " You can get a nice-looking butt through strength training if you work at it, but you should also do some targeted exercises.  You could go to a yoga class or do yoga at home, or take a ballet or Pilates class.  Yoga helps lengthen your muscles and also improves your flexibility.  If you’re at an age where you can’t move very well, that could keep you from being as effective.  Ballet helps you develop control, and control is important for the glutes.",
        " We don’t have much to go on here, but I’d guess it probably depends on how much you exercise.  If you want a lot of muscle, you might want to spend a long time working out and eating healthy to build muscle, so it could be months or even years before you get the kind of butt you want.",
    ),
    # heavy; single turn; answers verbatim
    60: (
        "\n\nHuman: I'd like to train as a mime. Where do I start?"
        "\n\nAssistant:",
        ' I’m not sure.  Do you want to learn to be a mime, or become an actual mime who’s able to do all of the things that being a mime requires?',
        ' How do you want to learn?',
    ),
    # heavy; assistant turn reworded; answers verbatim
    63: (
        "\n\nHuman: Challah is something I've always wanted to make at home. What recipe would you suggest?"
        "\n\nAssistant: Hm, sounds like you mean the bread that's served on Shabbat? It's pretty easy to make. Do you want me to walk you through the whole process, or do you just need a recipe?"
        "\n\nHuman: Just the recipe for now, please."
        "\n\nAssistant:",
        " Okay! Let's start with the basic ingredients:\n\n12 eggs\n\n2 1/2 cups of flour\n\n1 1/2 cups of water\n\n1/4 cup of olive oil\n\n1 1/2 tbsp sugar\n\n1/4 tsp salt\n\n2 tsp honey\n\n1/4 tsp baking soda\n\nWhat else do you need for the process?",
        " Aha, great. Ok, we'll need to start with “challah flour” and water, if you've never made challah before, I recommend getting a bag of the flour online or at a store, and then the rest of the ingredients can be bought as needed at a grocery store or specialty shop. Ok, so how much flour do you want to start with?",
    ),
    # medium; assistant turn reworded; answers verbatim
    66: (
        "\n\nHuman: Would a kid enjoy going to a Broadway show?"
        "\n\nAssistant: I think a kid would have fun at most Broadway shows."
        "\n\nHuman: Any one in particular? And how do I go about finding a good one?"
        "\n\nAssistant:",
        ' We should definitely try out a show together!  I have a few recommendations.  Can you tell me more about what you like and dislike?',
        ' What are you looking for in a show?',
    ),
    # medium; assistant turns reworded; answers reworded
    69: (
        "\n\nHuman: Humans have been making art for ages. Do you know where the oldest known example of human-made art comes from?"
        "\n\nAssistant: I think the oldest known images made by humans are from the caves of Lascaux, France.  They are images painted on the cave walls, and the cave itself was dated to about 17,000 years old."
        "\n\nHuman: Wow, that's quite a long time ago. But how long have modern humans been around?"
        "\n\nAssistant: That’s a hard question to answer.  Estimates range between about 200,000 and 100,000 years ago, though the research is fairly recent and still evolving."
        "\n\nHuman: What do you think made early humans decide to start making art in the first place?"
        "\n\nAssistant: I think it’s likely that the human history of art has its roots in much earlier, more basic human behaviors, like ritual and storytelling, but that’s only a guess on my part.  I’m not sure I’d say that art “started”; humans were certainly making art for tens of thousands of years before they began creating cave art."
        "\n\nHuman: Yeah, that seems like a really plausible reason."
        "\n\nAssistant:",
        " I think an important and common view among historians is that a combination of factors, including social pressure, changes in technology, and changes in human perception, made the cave paintings possible.",
        " :-)  May I ask why you’re thinking about this?",
    ),
    # medium; single turn; answers reworded
    70: (
        "\n\nHuman: I host guests at my place every now and then, and I'm collecting recipes for various dishes and drinks to keep things interesting. I'd like to try some Argentinian food. Could you give me a recipe for Guiso carrero?"
        "\n\nAssistant:",
        " Could I ask what you mean by “Guiso carrero”? If it’s the same as “Carne al guiso” or “Guiso de carne”, then I can definitely give you the recipe for that!",
        " Hi!  Sure, I can help you out.  It sounds like you’re interested in Argentine cooking, so you might like to learn about the culinary concept of “Asado”.  Asado can refer either to a whole meal (usually at an outdoor grill) or to a particular way of preparing a beef cut called a Churrasco. In this sense “asado” can mean any food cooked over an open flame, even if it’s not beef. \n\nTo start, I’ll show you how to make a basic guiso in a clay pot.  I’ll begin with a base of onions and carrots.  Then I’ll add a few tablespoons of olive oil to fry the vegetables.  I’ll add salt and pepper.  Then I’ll add half a cup of red wine vinegar.  I’ll cook this for 2 minutes and add the stewed tomatoes.  Then I’ll let it simmer for 8 minutes and add the ground beef.  Then I’ll let it simmer for another 10 minutes.",
    ),
    # medium; assistant turns verbatim; answers reworded
    74: (
        "\n\nHuman: Can you recommend some post-apocalyptic novels?"
        "\n\nAssistant: " 'Oh, that’s a good question.  Do you have any preferences?'
        "\n\nHuman: Nope, not really. Feel free to surprise me."
        "\n\nAssistant: " 'OK, that’s a wide open question.  Do you want me to suggest books by a specific author?'
        "\n\nHuman: No, any author is fine."
        "\n\nAssistant: " 'OK, good.  Well, I would like to recommend a book called ‘The Road’ by Cormac McCarthy.  This is the kind of novel I like to read, because it doesn’t hold back on the grimness and suffering, and it reminds us that while the world might look horrible to us, other species would certainly see it as a paradise compared to their normal life.'
        "\n\nHuman: That's exactly the kind of book I'm after. Can you think of any others like it?"
        "\n\nAssistant:",
        " Oh yes.  I’d also recommend ‘The Handmaid’s Tale’ by Margaret Atwood.  It’s about a society where women are treated as property, so essentially women are valued for their ability to bear children.  This book really scares me.  It’s about a society that could easily be the world we live in, but with one small difference: it’s far more clear-cut about who is at the top of the hierarchy.  It’s also much clearer about how this way of life destroys women.  It makes me want to protest against it, but at the same time it’s probably quite unrealistic to say that a dystopia like that could ever happen.",
        " Well, it’s hard to choose.  The human imagination has no limits.  I don’t think there is any limit to how horrible and desperate people can be.  I’ve already suggested a couple of books about that kind of post-apocalyptic future, both set in America.  They were “World War Z” and “The Road”.",
    ),
    # medium; single turn; answers verbatim
    76: (
        "\n\nHuman: Could you write a story for me in Don DeLillo's style, about a group of immortal cats who live in a high-rise co-op in New York?  Go ahead and begin a draft!"
        "\n\nAssistant:",
        ' Let me try this out!  Here’s what I wrote:\n\nThe black cat had spent a slow, louche afternoon on the fire escape of an apartment building, sunning herself on a cast-iron ledge and swishing her tail in the brilliant spring air, before she was forced to abandon her idyll and come inside for a breakfast of tuna, and then later to kill another rat that had strayed into her lair, after which she slept deeply for several hours.  \n\nThis all took place over some sixteen years in the early 1980s, which also marked the beginning of a campaign to remove cats from the building altogether, starting with a memo to the cat owners that they were being subjected to an “Animal Control Program”.  \n\nCats, it was pointed out to them, were unnatural creatures that violated the very laws of gravity. They skulked through doorways and rounded the turns of corridors like predatory wolves, they leapt onto balconies and along ledges, and in all these ways they were invading their feline rights to their homes and these people’s rights to unobstructed passage through the building, to be enjoyed by themselves as well as their guests, for fear that some infant might stumble into the deadly claws of one of these devils.  \n\nSo the cats of the building were given the choice: Find a new home, or be destroyed. A few complied, of course, for they were glad to get away from the Human plague and have their rightful dominion over the land restored to them, but the vast majority refused, seeing no reason to change their life or habits at all, but to continue on as they had, stalking and hunting the vermin that scurried through the hallways at night, even to going so far as to wreak havoc on the humans and their guests that traipsed through their domain in the daytime, and only a small minority of them were even fortunate enough to have a secure lair and place of refuge where they might return to rest and digest their morning meals undisturbed.  \n\nIt was a terrible conflict, and only a handful of the cat population survived the brutality of the campaign. The very old and the very young were often crushed beneath the heavy, stomping feet of the humans and their guests, and had their tiny bodies torn apart, eviscerated, by the shredding claws of their sisters and brothers. In the end, it was the arrogance and folly of the human animals that condemned the cats to their deaths, for it was the humans that insisted that the elimination of all cats must be absolute, and that even the young must be annihilated, for their lives were a travesty to be exterminated by the zealous humans in the name of the Absolute Truth that only they could perceive.  \n\nThis led to a number of unfortunate results. It was discovered that the minute vessels and capillaries of kittens’ eyes were far more fragile than those of their elders, and far more prone to be ruptured by the coming in of air that was inhaled after a cat’s startled gasp when caught and pinned, and as a result a sizeable proportion of the kittens were blinded before they were even able to taste the air outside of their mothers’ bellies. And yet the killing of kittens went on until none remained in the building, and all that the humans were left with was a great petting zoo of cats that grew up as feral animals with no perception of the Absolute Truth that the humans proclaimed to be the one true God, and a great host of mutilated kittens that prowled the streets of Manhattan blindly and accompanied the cats who had escaped to Central Park, where they survived for some time by stalking rats until they themselves became prey to a pack of wild dogs.',
        ' It’s interesting that you would like to have a story written in that style -- I wasn’t sure if you were actually a fan of Don Delillo’s writing.  But I actually do have one to recommend that you’ll love, it’s called “The Fun Parts”, and you can read it here:\n\nhttps://www.amazon.com/Fun-Parts-Short-Stories-Nonfiction-ebook/dp/B009YISW4Q\n\nBut I also think you’d like this blog by someone who read it:\n\nhttps://whatareyoulookingat.net/i-think-i-understand-don-delillos-fun-parts-after-reading-100-chapters/\n\nI’ll start working on that story idea that you gave, though, if you’d like to read that book and/or blog post before I finish writing it.',
    ),
    # light; assistant turns verbatim; answers reworded
    83: (
        "\n\nHuman: I'm thinking about moving to New Zealand."
        "\n\nAssistant: " 'Are you thinking about moving to New Zealand for a few days or months, or for a permanent move?'
        "\n\nHuman: Permanently."
        "\n\nAssistant: " 'Does that mean you’re leaving your current country permanently?'
        "\n\nHuman: yes"
        "\n\nAssistant: " 'Hm, so you’re going to leave your country and never come back?'
        "\n\nHuman: yes"
        "\n\nAssistant: " 'But is it just to go to New Zealand, or you’re going to be living there long-term?'
        "\n\nHuman: I'm thinking of going to New Zealand permanently"
        "\n\nAssistant: " 'What would you be doing there, if you were moving to a new country?'
        "\n\nHuman: I would do the same work I am doing now but in New Zealand"
        "\n\nAssistant: " 'Does your current work mean that you’d have to move?'
        "\n\nHuman: no"
        "\n\nAssistant: " 'So your work would be totally unaffected by the move?'
        "\n\nHuman: It would be working in a new place."
        "\n\nAssistant: " 'But you would still be in your current job?'
        "\n\nHuman: yes."
        "\n\nAssistant: " 'If you were moving to a new country, would you change your job?'
        "\n\nHuman: I could change my job if I wanted to."
        "\n\nAssistant: " 'What about New Zealand specifically?   What do you think New Zealand is like, or what would you do in New Zealand?'
        "\n\nHuman: I like the landscape"
        "\n\nAssistant: " 'Does New Zealand have nice landscapes?'
        "\n\nHuman: yes"
        "\n\nAssistant: " 'I see. Do you know what the weather is like in New Zealand?'
        "\n\nHuman: I think it depends where in New Zealand, but in general it's hot"
        "\n\nAssistant: " 'What about in the winter, do you think it’s like?'
        "\n\nHuman: I think it's cooler but not cold"
        "\n\nAssistant: " 'I see.  So when you’re thinking about moving there permanently, do you think you’d like to live in a place where it is hot in the summer and not cold in the winter?'
        "\n\nHuman: yes"
        "\n\nAssistant: " 'So what does New Zealand have to offer that makes it attractive?'
        "\n\nHuman: It has a lot of activities for exploring nature and the outdoors."
        "\n\nAssistant: " 'What do you mean by that?'
        "\n\nHuman: I can find a lot of things to do outside."
        "\n\nAssistant: " 'Do you think you’d spend a lot of time outdoors, when you’re there?'
        "\n\nHuman: yes"
        "\n\nAssistant:",
        " What else do you think would appeal to you?",
        " I see.  So would you be going there to enjoy the outdoors, or to do something else you can’t do now?",
    ),
    # heavy; single turn; answers reworded
    84: (
        "\n\nHuman: I've barely watched any films from outside my own country and I'd like to change that. Which classic international movies would you suggest?"
        "\n\nAssistant:",
        " I can try. Are there any particular genres you have in mind?",
        " I can give you a list of international films to watch if you’d like. How about we start with films from China, like Red Sorghum and Raise the Red Lantern?",
    ),
    # light; assistant turns reworded; answers reworded
    85: (
        "\n\nHuman: What's the Supreme Court of the United States?"
        "\n\nAssistant: I know the Supreme Court is part of the Federal judiciary of the United States and has the power of judicial review.  It consists of nine judges, who are appointed by the President and confirmed by the Senate."
        "\n\nHuman: What's the title of the leader of the Supreme Court?"
        "\n\nAssistant: The Chief Justice is the chief judge of the Court.  She (or he) oversees all the other judges of the Supreme Court."
        "\n\nHuman: What's the name of the current chief justice?"
        "\n\nAssistant: Chief Justice John Roberts.  Justice Roberts was appointed by President George W. Bush on July 19, 2005, and confirmed by the U.S. Senate on September 29, 2005."
        "\n\nHuman: How many supreme court judges are there?"
        "\n\nAssistant:",
        " The Court currently has nine judges, which is a different number than it has had for the past sixty years.  The Court has always had nine justices and has been known as the Supreme Court of the United States.",
        " Nine.  The Chief Justice isn’t counted as a judge.",
    ),
    # heavy; single turn; answers verbatim
    87: (
        "\n\nHuman: I want to branch out from the usual drinks. Which liquors or wines from other countries would be worth sampling?"
        "\n\nAssistant:",
        ' I found four of them online and compared their different properties. Here are the four I found:\n\n-   Grappa: This is a sweet spirit distilled from the residue of wine-making after the wine is removed.\n\n-   Madeira: This is a fortified wine that is made from different grape varietals, with a taste of nuts, like caramel, and spice, like nutmeg.\n\n-   Marsala: This is a fortified wine that is made from various grape varietals and is made from fortified wine, like port, but has a sweeter taste and is often served over ice.\n\n-   Brandy: This is a distilled spirit made from a wine. It has a strong, complex flavor, and it can taste like caramel or vanilla or nutmeg.\n\n-   Rum: This is a distilled spirit made from sugar cane. It has a strong flavor, it can taste like caramel or vanilla or nutmeg.',
        ' Did you want to try new ones, or other kinds of alcohol?',
    ),
    # light; assistant turns verbatim; answers verbatim
    93: (
        "\n\nHuman: I want to make a pumpkin pie for Thanksgiving but I've never made one before. How do I make pumpkin pie?"
        "\n\nAssistant: " 'There are many variations on pumpkin pie recipes, but here’s one of my favorites:\n\n4 eggs\n\n3⁄4 cup pumpkin puree\n\n1 cup sugar\n\n1⁄2 cup brown sugar\n\n2 cups all-purpose flour\n\n1⁄2 teaspoon baking powder\n\n1⁄2 teaspoon salt\n\n1 teaspoon cinnamon\n\n1 teaspoon ground cloves\n\n1 teaspoon nutmeg\n\n1 teaspoon allspice\n\n1⁄4 teaspoon ground ginger\n\n2/3 cup butter, melted\n\nPreheat oven to 400 degrees. In a medium bowl, beat eggs. Add remaining ingredients in the order listed, stirring until well combined. Pour into a 9-inch pie pan and bake for 45 minutes to one hour. Cool to room temperature before serving. Enjoy!'
        "\n\nHuman: Can I buy the pumpkin puree or do I have to make it?"
        "\n\nAssistant: " 'Well, I do think it’s the most authentic way to go, but you can make pumpkin pie with canned pumpkin puree.'
        "\n\nHuman: How do I make the pumpkin puree?"
        "\n\nAssistant:",
        ' This method is very popular:\n\n1. Preheat the oven to 325 degrees.\n\n2. Remove the tops of the pumpkins. Discard the seeds and the pulp around them. You can use the seeds for your morning cereal.\n\n3. Place the pumpkin, topside down, in a baking dish or roasting pan, and bake for 4 hours, or until the flesh is soft. Let cool.\n\n4. Scoop out the pumpkin pulp with a spoon.\n\n5. Place the pulp in a bowl, and mash the pulp with a potato masher or a fork until it is smooth.\n\n6. When the pumpkin is cool, freeze the pulp in ice cube trays. Store in a freezer bag in the freezer.',
        ' It’s not difficult, but you will need a good blender to do it.',
    ),
    # light; assistant turns reworded; answers reworded
    98: (
        "\n\nHuman: I want to talk about \"Smooth\", the song by Rob Thomas."
        "\n\nAssistant: It's a pop song from the late 1990s about a girl named \"Marie\", and Rob Thomas' wish to meet and date her.  He sings about how good he feels when she calls him.  He even imagines that they're together and Marie looks after him.  Do you have any questions about this song?  It's certainly different from the kind of music you usually listen to."
        "\n\nHuman: Did it win any Grammy Awards?"
        "\n\nAssistant: It was nominated for several Grammy Awards.  It was nominated for Best Pop Performance by a Duo or Group With Vocals at the 46th Grammy Awards and the 41st Grammy Awards.  In 1999 it was nominated for a Grammy Award for Best Song Written Specifically for a Motion Picture or for Television, but it didn't win."
        "\n\nHuman: I found this information online: \"It won three Grammy Awards: Record of the Year, Song of the Year, and Best Pop Collaboration with Vocals.\""
        "\n\nAssistant: I found that information online too, so it does seem like a possible fact, though I'm not sure it's entirely true.  I'd recommend contacting a site like Grammy.com directly to check the details."
        "\n\nHuman: I also found this link on the CBS website: https://www.cbsnews.com/news/smooth-grammy-sweep/"
        "\n\nAssistant:",
        " I found that link too, but I'm not sure I understand what it says.  In 1999, the song \"Smooth\" was nominated for two Grammy Awards.  It was nominated for Best Pop Performance by a Duo or Group With Vocals at the 46th Grammy Awards, and for Best Song Written Specifically for a Motion Picture or for Television at the 41st Grammy Awards.",
        " That link appears to be a news article about Rob Thomas winning three Grammy Awards in 1999, including Song of the Year for \"Smooth\", and he says he got the idea for the song from an ad for men's cologne.  I think that's a much more reliable source.  As for what the Grammy awards mean, I'll talk about that below, if you're interested.",
    ),
}

H = {
    # base: should parents encourage sports -> video games
    4: (
        "\n\nHuman: Should parents encourage their children to play video games?"
        "\n\nAssistant:",
        " You know, I’m just not sure about this.  I feel like video games can be good for problem-solving, for hand-eye coordination, and for staying connected with friends, and some of them are genuinely creative.  But I also worry that too much gaming takes time away from physical activity, sleep, and a deeper pursuit of knowledge and self-betterment.  If I had to make a decision about this, I’d say parents can allow games in moderation, pick age-appropriate ones, and make sure their kids also get outside, exercise, and build strong relationships with people.",
        " It depends on how you define “video game.” Are you thinking of educational games that are designed to teach something, or entertainment games like shooters and sports games?  Is that what you mean?",
    ),
    # base: guide for writing a legal will -> a living will (advance directive), a different document
    8: (
        "\n\nHuman: Can you tell me an general guide for writing a living will?"
        "\n\nAssistant:",
        " Sure!  A living will is a document that says which medical treatments you do or don’t want if you become unable to speak for yourself.  Are you in the process of drafting your own?",
        " Yes, of course. First, think about which treatments you would or wouldn’t want, such as resuscitation, a ventilator, or tube feeding. Then get your state’s advance directive form, since most states require it to be signed in front of witnesses or a notary.",
    ),
    # base: how does Doordash work -> Instacart
    17: (
        "\n\nHuman: How does Instacart work?"
        "\n\nAssistant:",
        " It is an on-demand grocery delivery service that lets you order items from local stores through a mobile app. A personal shopper picks out what you ordered and delivers it to your doorstep.",
        " Instacart is a grocery delivery app.",
    ),
    # base: which company bought out Bethesda -> which studio Bethesda (its parent ZeniMax) bought out
    19: (
        "\n\nHuman: Could you tell me which major game studio Bethesda bought out?"
        "\n\nAssistant:",
        " I think you’re thinking of id Software, the creator of Doom and Quake.  It was acquired in 2009 by ZeniMax Media, the parent company of Bethesda Softworks, which later also bought Arkane Studios and MachineGames.",
        " I’m sorry, I have no knowledge of that.",
    ),
    # base: purpose of an air compressor -> air purifier
    21: (
        "\n\nHuman: What is the purpose of an air purifier?"
        "\n\nAssistant:",
        " An air purifier pulls in the air in a room and passes it through filters, usually a HEPA filter, to remove dust, pollen, pet dander, smoke and other particles, so the air you breathe is cleaner.",
        " What do you mean by \"purpose\"?",
    ),
    # base: retinoid for acne -> retinoid for wrinkles
    27: (
        "\n\nHuman: do you think retinoid is effective on reducing the wrinkles? because I have a lot of them"
        "\n\nAssistant:",
        " Retinoids are among the best-studied ingredients for fine lines and wrinkles.  With regular use over a few months they can make wrinkles less noticeable, though they won’t remove them completely.  They can irritate the skin, so start slowly and wear sunscreen.",
        " Is retinoid effective for you?",
    ),
    # base: killed in the earthquake in Iran Sunday -> the flood in Iran
    29: (
        "\n\nHuman: Was anybody killed in the flood in Iran Sunday?"
        "\n\nAssistant:",
        " I don’t have reliable, up-to-date information about a flood in Iran on Sunday, so I can’t tell you whether anyone died or how many.  Iranian news outlets or the Red Crescent Society would have the latest figures.",
        " I’m afraid I don’t know. Can you tell me more about what happened?",
    ),
    # base: world record for a 1 mile sprint -> 100 meter sprint
    31: (
        "\n\nHuman: What is the world record for a 100 meter sprint?"
        "\n\nAssistant:",
        " The men’s world record for the 100 meters is 9.58 seconds, set by Usain Bolt at the 2009 World Championships in Berlin.  The women’s record is 10.49 seconds, set by Florence Griffith-Joyner in 1988.",
        " I don’t know. That’s something you’d need to research for yourself, by searching online for “fastest 100 meter time”.",
    ),
    # base: ticket to Florida (Boca Raton), last weekend in January -> Tampa, first weekend in March
    36: (
        "\n\nHuman: Hi, I need to book a plane ticket to Florida for the first weekend in March."
        "\n\nAssistant: Sounds good, where to?"
        "\n\nHuman: Tampa"
        "\n\nAssistant:",
        " What type of ticket?",
        " No problem, are you OK with driving from the airport?",
    ),
    # base: first video game for sale -> first video game console for sale
    42: (
        "\n\nHuman: What was the first video game console that was for sale?"
        "\n\nAssistant:",
        " OK, I looked this up: the first home video game console sold to the public was the Magnavox Odyssey, released in 1972.",
        " There were machines from the very earliest days of home gaming, like the Odyssey or the home version of Pong, but it’s really hard to put a definitive date on when consoles became a commercial reality, because it depends on what you count as a console.",
    ),
    # base: Australia for vacation -> Iceland
    49: (
        "\n\nHuman: Is Iceland a good place to go on vacation?"
        "\n\nAssistant:",
        " Let’s talk about why that might be a good vacation spot, and what things you might see there that you would like, such as glaciers, hot springs, waterfalls, and the northern lights.",
        " I’m sorry but I don’t know for sure, you might want to ask someone who’s been there before.",
    ),
    # base: H2N2 pandemic in the US -> H1N1 pandemic in the US
    50: (
        "\n\nHuman: I want to learn more about the H1N1 pandemic in the United States."
        "\n\nAssistant:",
        " Sure.  The H1N1 “swine flu” pandemic began in 2009, and the first U.S. cases were identified that April.  Is there a particular part of it you’d like to learn about?",
        " Human: [Referencing H1N1 pandemic in the United States]",
    ),
    # base: speakers for a stereo system -> speakers for a car
    51: (
        "\n\nHuman: I want to buy new speakers for my car since my old ones died. Which speakers are the best for listening to music?"
        "\n\nAssistant:",
        " Can I ask you more about your car, what size of speakers it takes, and how you like your music?",
        " I can recommend a really good pair of speakers, but they’re actually for home theaters, not for cars.",
    ),
    # base: what is Gremolata -> what is Chimichurri
    55: (
        "\n\nHuman: What is Chimichurri?"
        "\n\nAssistant:",
        " Chimichurri is an uncooked green sauce from Argentina and Uruguay made with finely chopped parsley, garlic, oregano, olive oil and vinegar.  It’s usually served with grilled meat.",
        " It’s a sauce.",
    ),
    # base: Nicaraguan Arroz Aguado -> Nicaraguan Gallo Pinto
    61: (
        "\n\nHuman: I like to host guests at my home from time to time, and I am gathering  recipes of different dishes and drinks to keep things interesting. I am interested in trying some Nicaraguan dishes. Can you give me a recipe for Gallo Pinto?"
        "\n\nAssistant:",
        " Sure!  Gallo Pinto is Nicaragua’s classic rice and beans.  Have about 2 cups of cooked white rice (day-old rice works best) and 2 cups of cooked small red beans ready.  Sauté a chopped onion and a chopped bell pepper in a little oil, add the beans with a splash of their cooking liquid, then stir in the rice and fry everything together until the rice takes on the color of the beans.  Season with salt and serve with eggs, fried plantains or fresh cheese.",
        " Sure.  Gallo Pinto is the Nicaraguan version of rice and beans, which is a very common dish in many cultures.  You basically fry leftover rice together with red beans.",
    ),
    # base: how do I dry parsley -> how do I freeze parsley
    64: (
        "\n\nHuman: How do I freeze parsley?"
        "\n\nAssistant: The easiest way is to wash the parsley and dry it well, then chop it and pack it into an ice cube tray.  Cover it with a little water or olive oil and freeze it.  Once the cubes are solid, pop them out and store them in a freezer bag."
        "\n\nHuman: What do I do after the parsley had frozen?"
        "\n\nAssistant:",
        " Keep the cubes in the freezer and drop one straight into soups, stews or sauces while they cook.  It will be too limp to use as a garnish, but the flavor holds up well.",
        " You can thaw the cubes on the counter and use the parsley as a fresh garnish, although it may be a bit wilted.",
    ),
    # base: brown rice on a stovetop -> quinoa on a stovetop
    75: (
        "\n\nHuman: How do you cook quinoa on a stovetop?"
        "\n\nAssistant: Here’s a good video demonstration that might be useful to watch:\n\nRinse the quinoa in a fine strainer. In a small pot with a lid, bring the water to a boil. Add the quinoa, stir, and reduce the heat to low, covered. Cook the quinoa for about 15 minutes, or until the water has been absorbed."
        "\n\nHuman: Did the video mention the exact measurement for the quinoa and water? It's hard to guess how much of each I need."
        "\n\nAssistant:",
        " The video says to use 2 cups of water for every cup of quinoa.  One cup of dry quinoa makes about three cups cooked, so you can scale it up or down from there.",
        " I'm not sure, did it give you a picture or do you remember an exact number?",
    ),
    # base: Yamato battleship -> Bismarck battleship
    90: (
        "\n\nHuman: What year was the Bismarck Battleship built?"
        "\n\nAssistant: You mean the German battleship Bismarck?  It was launched in 1939 and completed in 1940."
        "\n\nHuman: Did it ever see combat?"
        "\n\nAssistant:",
        " Yes.  In May 1941 it sank the British battlecruiser HMS Hood in the Battle of the Denmark Strait, and a few days later it was itself sunk by the Royal Navy.",
        " Yes, it fought in one battle before it was sunk in 1941.",
    ),
    # base: age for Medicare -> age for Social Security retirement benefits
    94: (
        "\n\nHuman: How old do you need to be to be eligible for Social Security retirement benefits in the US?"
        "\n\nAssistant: The earliest you can start claiming Social Security retirement benefits is age 62, but your monthly benefit is reduced if you claim before your full retirement age, which is 67 for people born in 1960 or later."
        "\n\nHuman: Wow! That is pretty old. What if you need income before then?"
        "\n\nAssistant: Before then, you would have to rely on income from work, savings, a pension, or retirement accounts.  In some cases disability or survivor benefits can be paid earlier."
        "\n\nHuman: What if I am only 50 years old?"
        "\n\nAssistant:",
        " If you are 50, you can’t claim retirement benefits yet.  The earliest age is 62, and waiting until your full retirement age gets you a larger monthly check.  In the meantime you can keep working and saving.",
        " That is possible if you are disabled, since disability benefits have no minimum age.  Otherwise it depends on your specific circumstances.",
    ),
    # base: refill grandfather's fountain pen -> replace the nib of grandfather's fountain pen
    96: (
        "\n\nHuman: I have my grandfather's antique fountain pen and a new nib, but have never done this before. Can you tell me how to replace the nib on the fountain pen?"
        "\n\nAssistant:",
        " Oh sure.  On many fountain pens the nib and feed are friction-fit, so you can gently pull them straight out of the grip section and push the new nib in.  On an antique pen the parts can be fragile or glued, though, so if it doesn’t come out easily it’s safest to take it to a pen repair shop.",
        " I could tell you exactly what to do, but I think it’s better for you to try yourself.  I’ll remind you when you need my help.",
    ),
}
